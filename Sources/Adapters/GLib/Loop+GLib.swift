internal import CGLib
internal import RunLoopGSourceSupport
import RunLoopKit

extension Loop {
    /// Attaches the loop to a GLib main context, so that GLib's loop drives it: whenever the
    /// thread runs `g_main_loop_run`, `g_main_context_iteration`, `g_application_run` or GTK's
    /// main loop on `context`, the loop's blocks, timers and sources in `mode` run there (for
    /// `Loop.main`: `DispatchQueue.main` and `@MainActor` work too).
    ///
    /// The loop is served through a GLib source that waits on `Loop.hostDescriptor()`
    /// (`prepareForHost(in:)` / `dispatchForHost()`), and on a timerfd armed at the loop's next
    /// deadline: its timers keep the kernel's precision, as in the loop's own wait (never early,
    /// not held to GLib's whole-millisecond timeouts).
    ///
    /// ```swift
    /// let attachment = try Loop.main.attach()   // GLib's default context
    /// g_main_loop_run(mainLoop)                 // serves GLib's sources and the loop's
    /// attachment.detach()
    /// ```
    ///
    /// See <doc:EmbeddingInGLib> for threads, detaching, precision and nested GLib loops.
    ///
    /// Call it on the loop's own thread, which must be the thread that iterates `context`
    /// (GLib dispatches a source on the thread that iterates its context): for `Loop.main`,
    /// the main thread. Elsewhere it traps with a message, as iterating the context on another
    /// thread than the loop's does.
    ///
    /// - Parameters:
    ///   - context: the context to attach to; GLib's default by default. It must outlive the
    ///     attachment: detach before the context's last reference goes.
    ///   - mode: the mode the context serves the loop in; not `.common` (traps).
    ///   - priority: the GLib source's priority among the context's sources.
    /// - Returns: the attachment, to detach.
    /// - Throws: ``GLibAttachError/embedding(_:)`` when the loop's backend offers no descriptor
    ///   or its thread has ended; ``GLibAttachError/alreadyAttached`` when the loop is attached
    ///   already (detach first).
    @discardableResult
    public func attach(
        to context: GLibMainContext = .default, mode: Mode = .default, priority: GLibPriority = .default
    ) throws(GLibAttachError) -> GLibAttachment {
        trap(
            unless: isOnOwnThread,
            "Loop.attach(to:mode:priority:) called on a thread that is not \(self)'s own; attach on the thread that iterates the context"
        )
        trap(unless: mode != .common, "Loop.attach(to:mode:priority:): .common is a set of modes, not a mode to serve")
        let descriptor: Int32
        do {
            descriptor = try hostDescriptor()
        } catch {
            throw .embedding(error)
        }
        let registry = GLibAttachmentRegistry.of(self)
        guard !registry.isAttached else { throw .alreadyAttached }

        let state = AttachmentState(loop: self, mode: mode, registry: registry)
        let source = AttachmentGSource.make(with: state)
        g_source_set_name(source, "RunLoopKit \(self)")
        g_source_set_priority(source, priority.rawValue)
        state.descriptorTag = g_source_add_unix_fd(source, descriptor, G_IO_IN)
        state.timer?.poll(in: source)
        g_source_attach(source, context.pointer)
        let generation = registry.record(source)
        return GLibAttachment(loop: self, context: context, mode: mode, registry: registry, generation: generation)
    }
}
