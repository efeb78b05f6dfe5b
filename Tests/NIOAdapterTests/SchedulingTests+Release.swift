import NIOCore
import NIOPosix
import RunLoopKit
import RunLoopKitNIO
import TestSupport
import Testing

/// What a scheduled task's closure captures, to see when the closure is released.
private final class Captured: Sendable {}

/// Schedules the task `schedule` makes with a new ``Captured`` for its closure to hold, and returns
/// a weak reference to that object with the task: the object lives as long as the closure.
private func scheduleCapturing<T>(
    _ schedule: (Captured) -> Scheduled<T>
) -> (captured: WeakRef<Captured>, scheduled: Scheduled<T>) {
    let captured = WeakRef<Captured>()
    let object = Captured()
    captured.value = object
    return (captured, schedule(object))
}

/// NIO's loops release a scheduled task's closure when it is cancelled, though its `Scheduled`
/// handle lives on (NIO tests this for any task, and for the task that was next to run); and
/// they run tasks due at one deadline in the order they were scheduled.
extension SchedulingTests {
    @Test("cancel releases the task's closure while its Scheduled handle lives", arguments: adapterBackends)
    func cancelReleasesClosure(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            let (captured, scheduled) = scheduleCapturing { object in
                eventLoop.scheduleTask(in: .hours(1)) { _ = object }
            }
            #expect(captured.value != nil, "the pending task must hold its closure")
            scheduled.cancel()
            #expect(failed(try outcome(of: scheduled.futureResult), with: .cancelled))
            #expect(captured.value == nil, "the cancelled task's closure is still alive")
            withExtendedLifetime(scheduled) {}
        }
    }

    @Test(
        "cancelling the task that was next to run releases its closure; the others still run in order",
        arguments: adapterBackends)
    func cancelNextReleasesClosure(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            // Far enough that a thread descheduled before the cancel does not let the task run.
            let base = NIODeadline.now() + .seconds(2)
            let (captured, next) = scheduleCapturing { object in
                eventLoop.scheduleTask(deadline: base) { withExtendedLifetime(object) { 0 } }
            }
            let later = (1...3).map { index in
                eventLoop.scheduleTask(deadline: base + .milliseconds(Int64(index))) { index }
            }
            next.cancel()
            #expect(captured.value == nil, "the cancelled next task's closure is still alive")
            #expect(failed(try outcome(of: next.futureResult), with: .cancelled))
            #expect(try later.map { try value(of: $0.futureResult) } == [1, 2, 3])
            withExtendedLifetime(next) {}
        }
    }

    @Test("a task that ran releases its closure while its Scheduled handle lives", arguments: adapterBackends)
    func ranReleasesClosure(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, _) throws in
            let (captured, scheduled) = scheduleCapturing { object in
                worker.loop.eventLoop.scheduleTask(in: .milliseconds(1)) { withExtendedLifetime(object) { 5 } }
            }
            #expect(try value(of: scheduled.futureResult) == 5)
            // The future completes inside the task's run; the run has returned once a later
            // block has run.
            _ = try value(of: worker.loop.eventLoop.submit {})
            #expect(captured.value == nil, "the task's closure outlived its run")
            withExtendedLifetime(scheduled) {}
        }
    }

    @Test("1,000 tasks scheduled for one deadline run in the order they were scheduled", arguments: adapterBackends)
    func equalDeadlinesInOrder(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            let order = Lock<[Int]>([])
            let deadline = NIODeadline.now() + .milliseconds(100)
            let tasks = (0..<1_000).map { index in
                eventLoop.scheduleTask(deadline: deadline) { order.withLock { $0.append(index) } }
            }
            for task in tasks { _ = try value(of: task.futureResult) }
            let ran = order.withLock { $0 }
            let outOfPlace = zip(ran, 0..<1_000).filter { $0 != $1 }.count
            #expect(ran.count == 1_000)
            #expect(outOfPlace == 0, "\(outOfPlace) of 1000 tasks at one deadline ran out of scheduling order")
            // The reference: a loop of NIO's own does the same.
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            defer { try? group.syncShutdownGracefully() }
            let nioOrder = Lock<[Int]>([])
            let nioDeadline = NIODeadline.now() + .milliseconds(100)
            let nioTasks = (0..<1_000).map { index in
                group.next().scheduleTask(deadline: nioDeadline) { nioOrder.withLock { $0.append(index) } }
            }
            for task in nioTasks { _ = try value(of: task.futureResult) }
            #expect(
                nioOrder.withLock { $0 } == Array(0..<1_000), "NIO's own loop ran tasks at one deadline out of order")
        }
    }

    @Test(
        "tasks at one past deadline run in scheduling order; a past deadline means now (T1)", arguments: adapterBackends
    )
    func equalPastDeadlinesInOrder(_ backend: BackendKind) async throws {
        let order = Lock<[Int]>([])
        try await onLoopThread(backend) { loop in
            let eventLoop = loop.eventLoop
            let past = NIODeadline.now() - .milliseconds(5)
            // Every past deadline is the instant it was scheduled at: one scheduled first at
            // a later past deadline still runs first (NIO's loops would run it last).
            eventLoop.scheduleTask(deadline: past + .milliseconds(1)) { order.withLock { $0.append(-1) } }
            for index in 0..<100 {
                eventLoop.scheduleTask(deadline: past) { order.withLock { $0.append(index) } }
            }
            _ = loop.run(timeout: generousDeadline)
        }
        try await offThePool {
            #expect(order.withLock { $0 } == [-1] + Array(0..<100))
        }
    }
}
