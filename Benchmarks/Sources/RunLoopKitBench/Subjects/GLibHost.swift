import CBenchGLib
import Synchronization

/// GLib alone: a `GMainLoop` on a context of its own (`GLibMainLoop`), run on its own pthread
/// until `stop()`. Work from other threads arrives with `g_main_context_invoke` (an idle source
/// attached to the loop's context, which wakes it).
final class GLibHost: Sendable {
    let main: GLibMainLoop
    private let thread: Mutex<PThread?>

    /// Starts the loop; `setup` runs on the loop's thread before the loop runs.
    static func start(setup: @escaping @Sendable (GLibMainLoop) -> Void = { _ in }) -> GLibHost {
        let handoff = Handoff<GLibMainLoop>()
        let thread = PThread {
            let main = GLibMainLoop.make()
            setup(main)
            handoff.put(main)
            main.run()
            main.tearDown()
        }
        return GLibHost(main: handoff.take(), thread: thread)
    }

    private init(main: GLibMainLoop, thread: PThread) {
        self.main = main
        self.thread = Mutex(thread)
    }

    /// Runs `body` on the loop's thread and returns its value.
    func onLoop<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> Value {
        let handoff = Handoff<Value>()
        main.perform { handoff.put(body()) }
        return handoff.take()
    }

    /// Quits the loop from inside it and joins its thread.
    func stop() {
        let main = self.main
        main.perform { main.quit() }
        thread.withLock { $0.take() }?.join()
    }
}
