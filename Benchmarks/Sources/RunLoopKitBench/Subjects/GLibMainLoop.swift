import CBenchGLib

/// A `GMainContext` of its own and a `GMainLoop` on it, made on the thread that will run it
/// and pushed as that thread's default context (so that GLib code on the thread which uses the
/// thread-default context, as GIO does, lands on it). Not the global default context: every
/// subject's loop lives at once in the wake scenario, each on its own thread and context.
///
/// The pointers cross threads for the calls GLib makes thread-safe (`g_main_context_invoke`,
/// `g_main_context_wakeup`, `g_source_attach`, `g_main_loop_quit`); running the loop stays on
/// its thread.
struct GLibMainLoop: @unchecked Sendable {
    /// The `GMainContext *`.
    let context: OpaquePointer
    /// The `GMainLoop *`.
    let loop: OpaquePointer

    /// Makes the context and the loop, on the calling thread (which must run it).
    static func make() -> GLibMainLoop {
        let context = g_main_context_new()!
        g_main_context_push_thread_default(context)
        return GLibMainLoop(context: context, loop: g_main_loop_new(context, 0)!)
    }

    /// Runs the loop until `quit` (on the thread that made it).
    func run() { g_main_loop_run(loop) }

    /// Ends `run` (any thread). A quit before `run` started would be forgotten (the run resets
    /// the flag): `GLibHost.stop` quits from a callback on the loop, which only a running loop
    /// calls.
    func quit() { g_main_loop_quit(loop) }

    /// Undoes `make`, on the same thread, after `run` returned.
    func tearDown() {
        g_main_context_pop_thread_default(context)
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }

    /// Calls `body` on the loop's thread: `g_main_context_invoke` from another thread attaches
    /// an idle source (default priority) to the context, which wakes it. The closure is boxed
    /// and passed as the source's data, as a Swift program posting work to GLib would.
    func perform(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Callback(body)).toOpaque()
        g_main_context_invoke(
            context,
            { data in
                Unmanaged<Callback>.fromOpaque(data!).takeRetainedValue().body()
                return GLibConstant.remove
            }, box)
    }

    /// A Swift closure as a GLib callback's data.
    final class Callback: @unchecked Sendable {
        // Immutable once made; GLib hands it to exactly one thread's callback.
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
