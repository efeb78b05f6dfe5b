// A LoopThread as a swift-service-lifecycle service: its loop serves a timer and blocks while
// a ServiceGroup runs, and ends gracefully when the group shuts down — here the program shuts
// itself down once the work is done; in production SIGTERM would (the group below also listens
// for it).
//
// The shutdown order: the loop runs every block posted before the graceful shutdown began, then
// ends; its thread is joined without blocking a cooperative thread; the group's run() returns.
// A block posted once the shutdown began is refused (perform returns false).
//
//   swift run --package-path Examples loop-service
import Logging
import RunLoopKit
import RunLoopKitServiceLifecycle
import ServiceLifecycle
import Synchronization

/// Runs the service under its group, does the work, and shuts the group down.
func serveThenShutDown() async throws {
    // RunLoopKit's own reports (misuse it notices) go where the program's logs go.
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardOutput(label: label)
        handler.logLevel = .info
        return handler
    }
    let logger = Logger(label: "loop-service")
    Loop.logger = Logger(label: "runloopkit")

    let service = try LoopThreadService(name: "loop-service")
    let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm], logger: logger)

    // Work on the loop's thread: a timer ticks five times and reports each tick to the main task
    // through an AsyncStream (the handler runs on the loop's thread and cannot await).
    let (ticks, tick) = AsyncStream<Int>.makeStream()
    let ticked = Counter()
    let timer = try Loop.Timer(after: .milliseconds(20), repeating: .milliseconds(20)) { timer in
        let count = ticked.increment()
        tick.yield(count)
        if count == 5 {
            timer.invalidate()
            tick.finish()
        }
    }
    service.loop.add(timer, to: .default)

    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }

        for await count in ticks {
            logger.info("tick \(count) on the loop's thread")
        }
        // Blocks posted before the shutdown all run before the loop ends, in order.
        for job in 1...3 {
            service.thread.perform { logger.info("block \(job), posted before the shutdown") }
        }
        logger.info("work done: shutting down gracefully")
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
    }

    let refused = !service.thread.perform { logger.info("never printed") }
    logger.info("the group's run returned; a block posted now is refused: \(refused)")
}

/// How many times the timer fired (it fires on the loop's thread).
final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    /// Adds one; returns the new count.
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
}

try await serveThenShutDown()
