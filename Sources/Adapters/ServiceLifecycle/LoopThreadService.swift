import RunLoopKit
import ServiceLifecycle

/// A `LoopThread` as a swift-service-lifecycle `Service`: its loop serves while the
/// `ServiceGroup` runs, and ends after the blocks posted before the graceful shutdown.
///
/// ```swift
/// let service = try LoopThreadService(name: "io")
/// let group = ServiceGroup(
///     services: [service], gracefulShutdownSignals: [.sigterm], logger: logger)
/// service.thread.perform { print("on the loop's thread") }
/// try await group.run()
/// ```
///
/// Reach the loop through ``thread`` (`LoopThread.perform(waitUntilDone:_:)`) or
/// ``loop`` (sources, timers, observers; a loop is also an executor). ``run()`` holds no thread
/// while it serves: the loop runs on the service's own thread, whether or not ``run()`` was
/// called yet.
///
/// When the group shuts down gracefully, or the task running ``run()`` is cancelled, the loop
/// finishes every block posted before that moment, then ends; the thread is joined without
/// blocking a cooperative thread (`LoopThread.finish()`), and ``run()`` returns.
/// A block posted once the shutdown began is refused: `perform` returns false and the block
/// never runs. If the thread is ended another way (`LoopThread.stop()`), ``run()``
/// returns then, which the group treats as the service ending.
public struct LoopThreadService: Service {
    /// The thread whose loop the service runs; post blocks to it from any thread.
    public let thread: LoopThread

    /// The thread's loop.
    public var loop: Loop { thread.loop }

    /// A service for `thread`: its loop serves already; ``run()`` ends it at graceful shutdown
    /// or cancellation. Give a thread to one service only.
    public init(thread: LoopThread) {
        self.thread = thread
    }

    /// A service for a new thread whose loop runs on a built-in backend.
    ///
    /// - Parameters:
    ///   - name: the thread's name (Linux keeps the first 15 bytes).
    ///   - backend: the backend, the build's default if not given.
    /// - Throws: what `LoopThread(name:backend:)` throws when the backend or the thread cannot
    ///   start.
    public init(name: String = "RunLoopKit", backend: BackendKind = .default) throws {
        self.init(thread: try LoopThread(name: name, backend: backend))
    }

    /// Serves until graceful shutdown or cancellation, then ends the loop after the blocks
    /// posted before it and returns once the thread has ended; returns at once if the thread
    /// has already ended. Never throws.
    public func run() async {
        let thread = self.thread
        await withTaskCancellationOrGracefulShutdownHandler {
            await thread.waitUntilEnded()
        } onCancelOrGracefulShutdown: {
            // Called synchronously by the group (or at cancellation): it only queues the
            // finishing block and hands the join to a thread of its own.
            thread.beginFinishing()
        }
    }
}
