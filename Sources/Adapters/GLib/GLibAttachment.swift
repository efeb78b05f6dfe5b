internal import RunLoopGSourceSupport
import RunLoopKit

/// A loop attached to a GLib `GMainContext` (``RunLoopCore/Loop/attach(to:mode:priority:)``):
/// detach it with ``detach()``.
///
/// The attachment stays until ``detach()`` or the end of the loop's thread, whether or not you
/// keep this object.
public final class GLibAttachment: Sendable {
    /// The loop the context drives.
    public let loop: Loop
    /// The context that drives it.
    public let context: GLibMainContext
    /// The mode the context serves the loop in.
    public let mode: Loop.Mode

    private let registry: GLibAttachmentRegistry
    private let generation: UInt64

    init(loop: Loop, context: GLibMainContext, mode: Loop.Mode, registry: GLibAttachmentRegistry, generation: UInt64) {
        self.loop = loop
        self.context = context
        self.mode = mode
        self.registry = registry
        self.generation = generation
    }

    /// Whether the context still drives the loop through this attachment: false after
    /// ``detach()`` and after the loop's thread ended. Safe from any thread.
    public var isAttached: Bool { registry.isAttached(generation: generation) }

    /// Stops the context driving the loop: the GLib source is destroyed, the loop's wait for the
    /// host ends (the loop is no longer published as asleep, `Loop.currentMode`
    /// is nil again outside runs), and nothing of the loop runs from the context afterwards.
    /// Called from one of the loop's callbacks, the current pass finishes first. Idempotent:
    /// later calls do nothing. The loop can be attached again afterwards.
    ///
    /// Call it on the loop's thread (the context's): a detach from another thread while the
    /// attachment lasts could not know whether a dispatch is running there; it traps with a
    /// message. Once the attachment has ended (``isAttached`` is false: detached already, or
    /// the loop's thread ended, which destroyed the source), a call does nothing, on any thread.
    public func detach() {
        // Ended already: nothing to do, and nothing to check (after the loop's thread ended,
        // no thread is the loop's own).
        guard isAttached else { return }
        trap(
            unless: loop.isOnOwnThread,
            "GLibAttachment.detach() called on a thread that is not \(loop)'s own; detach on the thread that iterates the context"
        )
        guard let source = registry.take(generation: generation) else { return }
        let state = AttachmentGSource.state(of: source)
        if state.isPrepared {
            state.isPrepared = false
            loop.cancelHostWait()
        }
        ObjectGSource.destroy(source)
    }
}
