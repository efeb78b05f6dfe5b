#if GLib
internal import CGLib
import RunLoopKit
import Synchronization
import TestSupport

/// A Swift closure as a GLib callback: retained by the source, released when GLib destroys it.
/// The body returns whether the source stays (`G_SOURCE_CONTINUE`).
///
/// A test may attach the source on another thread than the one that dispatches or destroys it.
/// GLib's context lock orders the attach before both, but libglib is not instrumented, so the
/// Thread Sanitizer would see no order between what the attaching thread wrote (this box, the
/// closure and what it captures) and the callback that reads it or the release that frees it.
/// `attached` states GLib's order in terms TSan sees: stored (releasing) just before
/// `g_source_attach`, loaded (acquiring) before each run and before the release.
private final class GLibCallback {
    private let body: () -> Bool
    private let attached = Atomic<Bool>(false)
    init(_ body: @escaping () -> Bool) { self.body = body }

    /// Called by the attaching thread right before `g_source_attach`.
    func willAttach() { attached.store(true, ordering: .releasing) }

    /// On the thread that runs or destroys the source: orders what follows after what the
    /// attaching thread did before `willAttach()`, as GLib's lock already does.
    func orderAfterAttach() {
        precondition(attached.load(ordering: .acquiring), "GLibCallback: its source was never attached")
    }

    /// Runs the body; returns whether the source stays.
    func run() -> Bool {
        orderAfterAttach()
        return body()
    }
}

private let runCallback: GSourceFunc = { data in
    Unmanaged<GLibCallback>.fromOpaque(data!).takeUnretainedValue().run() ? 1 : 0
}

/// A `GUnixFDSourceFunc`'s shape: GLib calls an fd source's callback with the descriptor and
/// condition first.
private typealias UnixFDCallback = @convention(c) (Int32, GIOCondition, gpointer?) -> gboolean
private let runFDCallback: UnixFDCallback = { _, _, data in
    Unmanaged<GLibCallback>.fromOpaque(data!).takeUnretainedValue().run() ? 1 : 0
}

private let releaseCallback: GDestroyNotify = { data in
    let callback = Unmanaged<GLibCallback>.fromOpaque(data!)
    callback.takeUnretainedValue().orderAfterAttach()
    callback.release()
}

/// A `GMainContext *` that closures may capture and threads share (GLib's contexts are
/// thread-safe).
struct GLibContext: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The `GMainContext` a GLib-backed loop serves.
func glibContext(of loop: Loop) -> GLibContext {
    GLibContext(pointer: loop.withBackend { ($0 as! GLibBackend).context })
}

/// Attaches `source` to `context` with `body` as its callback, and drops this reference.
private func attach(
    _ source: UnsafeMutablePointer<GSource>, to context: OpaquePointer, _ callback: GSourceFunc,
    _ body: @escaping () -> Bool
) {
    let box = GLibCallback(body)
    g_source_set_callback(source, callback, Unmanaged.passRetained(box).toOpaque(), releaseCallback)
    box.willAttach()
    g_source_attach(source, context)
    g_source_unref(source)
}

/// `g_timeout_add` on `context`: `body` runs after `milliseconds`, again while it returns true.
func glibTimeout(on context: GLibContext, milliseconds: UInt32, _ body: @escaping () -> Bool) {
    attach(g_timeout_source_new(milliseconds), to: context.pointer, runCallback, body)
}

/// `g_idle_add` on `context`: `body` runs when nothing of higher priority is ready.
func glibIdle(on context: GLibContext, _ body: @escaping () -> Bool) {
    attach(g_idle_source_new(), to: context.pointer, runCallback, body)
}

/// `g_unix_fd_add` on `context`: `body` runs while `descriptor` is readable.
func glibReadableWatch(on context: GLibContext, descriptor: Int32, _ body: @escaping () -> Bool) {
    attach(
        g_unix_fd_source_new(descriptor, G_IO_IN), to: context.pointer,
        unsafeBitCast(runFDCallback, to: GSourceFunc.self),
        body)
}

/// A `GMainLoop` on `context`, run nested until `body`'s sources quit it.
func runNestedGLibLoop(on context: GLibContext, _ body: (_ quit: @escaping () -> Void) -> Void) {
    let glibLoop = g_main_loop_new(context.pointer, 0)!
    let box = SendableLoop(glibLoop)
    body { g_main_loop_quit(box.loop) }
    g_main_loop_run(glibLoop)
    g_main_loop_unref(glibLoop)
}

private struct SendableLoop: @unchecked Sendable {
    let loop: OpaquePointer
    init(_ loop: OpaquePointer) { self.loop = loop }
}

/// `g_main_context_wakeup`, as GLib code on another thread calls it.
func glibWakeUp(_ context: GLibContext) {
    g_main_context_wakeup(context.pointer)
}
#endif

#if GLib
/// A new `GMainContext` of the test's own; release it with ``releaseGLibContext(_:)``.
func makeGLibContext() -> GLibContext {
    GLibContext(pointer: g_main_context_new())
}

/// Drops the test's reference to a context made by ``makeGLibContext()``.
func releaseGLibContext(_ context: GLibContext) {
    g_main_context_unref(context.pointer)
}
#endif

/// Runs `body` on a new thread owning a loop of the GLib backend, kept alive by a timer an hour
/// away, with the loop's GLib context and a trace to record into; returns what was traced.
func tracedGLibLoop(_ body: @escaping @Sendable (Loop, GLibContext, Trace) throws -> Void) async throws -> [String] {
    try await onLoopThread(.glib) { loop in
        let trace = Trace()
        let context = glibContext(of: loop)
        let keepAlive = try Loop.Timer(after: generousDeadline) { _ in }
        loop.add(keepAlive, to: .default)
        defer { keepAlive.invalidate() }
        try body(loop, context, trace)
        return trace.all
    }
}
