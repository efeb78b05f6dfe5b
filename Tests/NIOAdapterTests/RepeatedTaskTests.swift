import NIOCore
import RunLoopKit
import RunLoopKitNIO
import TestSupport
import Testing

/// NIO's scheduling built on `scheduleTask`: repeated tasks, flat-scheduled tasks, `NIOLoopBound`
/// and the isolated views, on a loop's adapter.
@Suite("RunLoopKitNIO: repeated tasks, loop-bound values and isolated views")
struct RepeatedTaskTests {
    @Test(
        "scheduleRepeatedTask runs on the loop's thread until cancelled; the cancel promise completes once it stops",
        arguments: adapterBackends)
    func repeated(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            let runs = Lock<[Bool]>([])
            let fifth = eventLoop.makePromise(of: Void.self)
            let stopped = eventLoop.makePromise(of: Void.self)
            let start = NIODeadline.now()
            eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(1), delay: .milliseconds(1), notifying: stopped)
            {
                task in
                let count = runs.withLock {
                    $0.append(isOnThread(of: worker.loop))
                    return $0.count
                }
                if count == 5 {
                    task.cancel()
                    fifth.succeed()
                }
            }
            _ = try value(of: fifth.futureResult)
            _ = try value(of: stopped.futureResult)
            // Five runs, each at least a delay after the one before it: never early.
            #expect(NIODeadline.now() - start >= .milliseconds(5))
            // A task scheduled after the cancel, later than the next repetition would have been,
            // runs without a sixth run before it.
            _ = try value(of: eventLoop.scheduleTask(in: .milliseconds(5)) {}.futureResult)
            #expect(runs.withLock { $0 } == Array(repeating: true, count: 5))
        }
    }

    @Test("scheduleRepeatedTask cancelled from another thread stops and notifies", arguments: adapterBackends)
    func repeatedCancelledElsewhere(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            let stopped = eventLoop.makePromise(of: Void.self)
            let runs = AtomicInt()
            let task = eventLoop.scheduleRepeatedTask(initialDelay: .hours(1), delay: .hours(1), notifying: stopped) {
                _ in runs.store(1)
            }
            task.cancel()
            _ = try value(of: stopped.futureResult)
            #expect(runs.value == 0)
        }
    }

    @Test("flatScheduleTask completes with the future its task returns", arguments: adapterBackends)
    func flatSchedule(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            let deadline = NIODeadline.now() + .milliseconds(5)
            let scheduled = eventLoop.flatScheduleTask(deadline: deadline) {
                eventLoop.submit { (NIODeadline.now() >= deadline, isOnThread(of: worker.loop)) }
            }
            #expect(try value(of: scheduled.futureResult) == (true, true))
            let cancelled = eventLoop.flatScheduleTask(in: .hours(1)) { eventLoop.makeSucceededFuture(1) }
            cancelled.cancel()
            #expect(failed(try outcome(of: cancelled.futureResult), with: .cancelled))
        }
    }

    @Test("NIOLoopBound and NIOLoopBoundBox hold a value used on the loop's thread", arguments: adapterBackends)
    func loopBound(_ backend: BackendKind) async throws {
        /// Not Sendable.
        final class Tally {
            var count = 0
        }
        try await withWorker(backend) { (worker, eventLoop) throws in
            let counted = try value(
                of: eventLoop.submit { () -> Int in
                    let bound = NIOLoopBound(Tally(), eventLoop: eventLoop)
                    let box = NIOLoopBoundBox(0, eventLoop: eventLoop)
                    for _ in 0..<3 {
                        bound.value.count += 1
                        box.value += 2
                    }
                    return bound.value.count * 100 + box.value
                })
            #expect(counted == 306)
            // Made off the loop's thread for a value handed to it: the box is read on the loop.
            let box = NIOLoopBoundBox.makeBoxSendingValue(41, as: Int.self, eventLoop: eventLoop)
            #expect(try value(of: eventLoop.submit { box.value + 1 }) == 42)
        }
    }

    @Test(
        "the isolated views run non-Sendable work on the loop's thread, in the order given", arguments: adapterBackends)
    func isolatedViews(_ backend: BackendKind) async throws {
        /// Not Sendable.
        final class Log {
            var entries: [String] = []
        }
        try await withWorker(backend) { worker, eventLoop in
            let entries = try value(
                of: eventLoop.flatSubmit { () -> EventLoopFuture<[String]> in
                    let log = Log()
                    let isolated = eventLoop.assumeIsolated()
                    let onLoop = { isOnThread(of: worker.loop) ? "loop" : "elsewhere" }
                    isolated.execute { log.entries.append("execute on \(onLoop())") }
                    let submitted = isolated.submit { log.entries.append("submit on \(onLoop())") }
                    // Scheduled once the submitted task ran: a task already due may run before
                    // immediate work queued earlier (the loop's timers come before its blocks in a
                    // pass), so only this order is fixed.
                    return submitted.assumeIsolated()
                        .flatMap {
                            isolated.scheduleTask(in: .milliseconds(1)) {
                                log.entries.append("scheduled on \(onLoop())")
                            }.futureResult
                        }
                        .map { log.entries + ["map on \(onLoop())"] }.nonisolated()
                })
            #expect(
                entries == ["execute on loop", "submit on loop", "scheduled on loop", "map on loop"])
        }
    }
}
