import NIOCore
import RunLoopKit
import RunLoopKitNIO
import Synchronization
import TestSupport
import Testing

/// `scheduleTask` on loop timers: on the loop's thread, never before the NIO deadline, in
/// deadline order, and cancellable.
@Suite("RunLoopKitNIO: scheduled tasks")
struct SchedulingTests {
    /// What a scheduled task saw when it ran.
    struct Firing: Sendable {
        let name: String
        let deadline: NIODeadline
        let ranAt: NIODeadline
        let onLoopThread: Bool
    }

    @Test(
        "scheduleTask(in:) and (deadline:) run on the loop's thread, never before the deadline, in deadline order",
        arguments: adapterBackends)
    func firesOnTimeInOrder(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            let base = NIODeadline.now()
            // Scheduled latest first: the order they run in is the deadlines', not the calls'.
            let late = base + .milliseconds(30)
            let lateTask = eventLoop.scheduleTask(deadline: late) {
                Firing(name: "deadline +30ms", deadline: late, ranAt: .now(), onLoopThread: isOnThread(of: worker.loop))
            }
            // The adapter reads the clock inside the call: its deadline lies between these two
            // plus 20 ms.
            let beforeMiddle = NIODeadline.now()
            let middleTask = eventLoop.scheduleTask(in: .milliseconds(20)) {
                Firing(
                    name: "in 20ms", deadline: beforeMiddle + .milliseconds(20), ranAt: .now(),
                    onLoopThread: isOnThread(of: worker.loop))
            }
            let afterMiddle = NIODeadline.now()
            let early = base + .milliseconds(10)
            let earlyTask = eventLoop.scheduleTask(deadline: early) {
                Firing(
                    name: "deadline +10ms", deadline: early, ranAt: .now(), onLoopThread: isOnThread(of: worker.loop))
            }
            let afterEarly = NIODeadline.now()
            let firings = try [lateTask, middleTask, earlyTask].map { try value(of: $0.futureResult) }
            for firing in firings {
                #expect(firing.onLoopThread, "\(firing.name) ran off the loop's thread")
                #expect(firing.ranAt >= firing.deadline, "\(firing.name) ran \(firing.deadline - firing.ranAt) early")
            }
            // The order of the deadlines, not of the calls, which depends on when the calls ran:
            // the loop runs on its own thread, and a loaded machine can hold the test between
            // calls (CI's Thread Sanitizer run held it 10 ms before the scheduleTask(in:) call,
            // whose deadline then fell after base + 30 ms). The order is known when the last task
            // was armed before either other one could be due (the earliest deadline then runs
            // first, even if it is already past); a test held 20 ms and more meanwhile checks
            // only the thread and the deadlines above.
            let order = firings.sorted { $0.ranAt < $1.ranAt }.map(\.name)
            let armedBeforeAnyWasDue = afterEarly < min(beforeMiddle + .milliseconds(20), late)
            if armedBeforeAnyWasDue && afterMiddle + .milliseconds(20) < late {
                #expect(order == ["deadline +10ms", "in 20ms", "deadline +30ms"])
            } else if armedBeforeAnyWasDue && beforeMiddle + .milliseconds(20) > late {
                #expect(order == ["deadline +10ms", "deadline +30ms", "in 20ms"])
            } else if armedBeforeAnyWasDue {
                // The call straddled base + 10 ms: its deadline and base + 30 ms are within its
                // duration of each other, in an order the test cannot know.
                #expect(order.first == "deadline +10ms")
            }
        }
    }

    @Test(
        "many tasks at scattered deadlines each run once, on the loop's thread, none early", arguments: adapterBackends)
    func manyNeverEarly(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            var generator = SystemRandomNumberGenerator()
            let tasks = (0..<500).map { _ in
                let deadline = NIODeadline.now() + .microseconds(Int64.random(in: 0..<20_000, using: &generator))
                return eventLoop.scheduleTask(deadline: deadline) { () -> Bool in
                    NIODeadline.now() >= deadline && isOnThread(of: worker.loop)
                }
            }
            let onTime = try tasks.map { try value(of: $0.futureResult) }
            #expect(onTime.count == 500)
            #expect(onTime.allSatisfy { $0 })
        }
    }

    @Test("a past deadline runs at the next pass", arguments: adapterBackends)
    func pastDeadline(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            let ran = eventLoop.scheduleTask(deadline: .distantPast) { isOnThread(of: worker.loop) }
            #expect(try value(of: ran.futureResult))
            let ranToo = eventLoop.scheduleTask(in: .milliseconds(-5)) { isOnThread(of: worker.loop) }
            #expect(try value(of: ranToo.futureResult))
        }
    }

    @Test(
        "cancel fails the future with cancelled and removes the loop timer; the task never runs",
        arguments: adapterBackends)
    func cancel(_ backend: BackendKind) async throws {
        let ran = AtomicInt()
        let (result, runResult) = try await onLoopThread(backend) { loop in
            let scheduled = loop.eventLoop.scheduleTask(in: .hours(1)) { ran.store(1) }
            let result = Lock<Result<Void, any Error>?>(nil)
            scheduled.futureResult.whenComplete { outcome in result.withLock { $0 = outcome } }
            scheduled.cancel()
            // With the timer gone, nothing is left in the mode: the run finishes at once instead
            // of sleeping until the deadline.
            let runResult = loop.run(timeout: generousDeadline)
            return (result.withLock { $0 }, runResult)
        }
        try await offThePool {
            #expect(result.map { failed($0, with: .cancelled) } == true)
            #expect(ran.value == 0)
            #expect(runResult == .finished)
        }
    }

    @Test("cancel from another thread before the deadline: cancelled, never run", arguments: adapterBackends)
    func cancelFromAnotherThread(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, _) throws in
            let ran = AtomicInt()
            let scheduled = worker.loop.eventLoop.scheduleTask(in: .hours(1)) { ran.store(1) }
            scheduled.cancel()
            #expect(failed(try outcome(of: scheduled.futureResult), with: .cancelled))
            // Once a block posted after the cancel has run, no timer callback is under way.
            _ = try value(of: worker.loop.eventLoop.submit {})
            #expect(ran.value == 0)
        }
    }

    @Test("cancel after the task ran has no effect", arguments: adapterBackends)
    func cancelAfterRun(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, _) throws in
            let scheduled = worker.loop.eventLoop.scheduleTask(in: .milliseconds(1)) { 42 }
            #expect(try value(of: scheduled.futureResult) == 42)
            scheduled.cancel()
            #expect(try value(of: scheduled.futureResult) == 42)
        }
    }

    @Test("a throwing scheduled task fails its future with the error", arguments: adapterBackends)
    func throwingTask(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, _) throws in
            struct Refused: Error, Equatable {}
            let scheduled = worker.loop.eventLoop.scheduleTask(in: .milliseconds(1)) { () throws -> Int in
                throw Refused()
            }
            let result = try outcome(of: scheduled.futureResult)
            #expect(throws: Refused()) { try result.get() }
        }
    }
}

extension SchedulingTests {
    @Test("a task at distantFuture leaves the loop serving; cancel ends it", arguments: adapterBackends)
    func distantFuture(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            let far = eventLoop.scheduleTask(deadline: .distantFuture) { 1 }
            let farIn = eventLoop.scheduleTask(in: .hours(24 * 365 * 100)) { 2 }
            let soon = try value(of: eventLoop.scheduleTask(in: .milliseconds(1)) { 3 }.futureResult)
            #expect(soon == 3)
            far.cancel()
            farIn.cancel()
            #expect(failed(try outcome(of: far.futureResult), with: .cancelled))
            #expect(failed(try outcome(of: farIn.futureResult), with: .cancelled))
        }
    }
}
