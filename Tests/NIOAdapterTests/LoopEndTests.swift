import Glibc
import NIOCore
import RunLoopKit
import RunLoopKitNIO
import Synchronization
import TestSupport
import Testing

/// When the loop's thread ends, nothing given to the adapter waits for ever, and no NIO promise
/// leaks (debug builds of NIO trap on a future freed unfulfilled: these tests would crash).
@Suite("RunLoopKitNIO: the loop's end")
struct LoopEndTests {
    @Test(
        "a scheduled task still pending when the loop ends fails with shutdown, and never runs",
        arguments: adapterBackends)
    func pendingScheduledTaskFails(_ backend: BackendKind) async throws {
        let ran = AtomicInt()
        let future = try await onLoopThread(backend) { loop in
            loop.eventLoop.scheduleTask(in: .hours(1)) { ran.store(1) }.futureResult
        }
        try await offThePool { () throws in
            #expect(failed(try outcome(of: future), with: .shutdown))
            #expect(ran.value == 0)
        }
    }

    @Test(
        "tasks the loop dropped at its end run after it, in order, holding the event loop; submit fails with shutdown",
        arguments: adapterBackends)
    func droppedWorkIsServed(_ backend: BackendKind) async throws {
        let log = Lock<[String]>([])
        let (promised, submitted, chained, eventLoop) = try await onLoopThread(backend) { loop in
            let eventLoop = loop.eventLoop
            // Never run: the thread ends without running a common mode, and the loop drops
            // these blocks when it is torn down.
            for index in 0..<3 {
                eventLoop.execute {
                    log.withLock { $0.append("task \(index) inEventLoop: \(eventLoop.inEventLoop)") }
                }
            }
            let promise = eventLoop.makePromise(of: Int.self)
            eventLoop.execute { promise.succeed(7) }
            let submitted = eventLoop.submit { 8 }
            // A chain whose futures nobody keeps: each must still be completed, or NIO's debug
            // leak check traps when they are freed.
            let chained = promise.futureResult.map { $0 * 2 }.flatMap { eventLoop.makeSucceededFuture($0 + 1) }
            _ = eventLoop.submit { 9 }.map { $0 + 1 }
            return (promise.futureResult, submitted, chained, eventLoop)
        }
        try await offThePool { () throws in
            #expect(try value(of: promised) == 7)
            #expect(failed(try outcome(of: submitted), with: .shutdown))
            #expect(try value(of: chained) == 15)
            #expect(
                log.withLock { $0 } == [
                    "task 0 inEventLoop: true", "task 1 inEventLoop: true", "task 2 inEventLoop: true",
                ])
            // Nothing holds the event loop now.
            #expect(!eventLoop.inEventLoop)
        }
    }

    @Test(
        "after the end: execute runs on the ended loop's executor, never inline, holding the event loop; scheduleTask and submit fail with shutdown",
        arguments: adapterBackends)
    func afterTheEnd(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            worker.stop()
            let caller = pthread_self()
            let ran = Lock<(inEventLoop: Bool, inline: Bool)?>(nil)
            eventLoop.execute { ran.withLock { $0 = (eventLoop.inEventLoop, pthread_self() == caller) } }
            #expect(
                waitUntil(within: .seconds(60)) { ran.withLock { $0 != nil } }, "execute's task did not run in 60 s")
            #expect(ran.withLock { $0?.inEventLoop } == true)
            #expect(ran.withLock { $0?.inline } == false, "execute ran its task inline on the calling thread")
            #expect(!eventLoop.inEventLoop)
            let scheduled = eventLoop.scheduleTask(in: .milliseconds(1)) { 1 }
            #expect(failed(try outcome(of: scheduled.futureResult), with: .shutdown))
            #expect(failed(try outcome(of: eventLoop.submit { 1 }), with: .shutdown))
            // A promise completed from any thread delivers its callbacks.
            let promise = eventLoop.makePromise(of: String.self)
            promise.succeed("late")
            #expect(try value(of: promise.futureResult.map { $0 + "!" }) == "late!")
        }
    }

    /// After the end, the event loop's work and Swift jobs isolated to the loop (its executor is
    /// the event loop's) are served by one executor: they never run side by side, and each holds
    /// the event loop. Both are given from several threads at once, and each stays a while.
    @Test(
        "after the end, execute work and an actor isolated to the loop take turns on one executor, each holding the event loop",
        arguments: adapterBackends)
    func oneExecutorAfterTheEnd(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            let actor = LoopActor(worker.loop)
            worker.stop()
            // The actor's callers prefer a loop of their own, not Swift's cooperative pool: the
            // rest of the suite can hold the pool's two threads for a minute.
            let callers = try LoopThread(backend: backend)
            defer { callers.stop() }
            let probe = TurnProbe()
            let rounds = 300
            // Not awaited: if the ended loop's executor stopped serving, the wait below fails
            // instead of hanging here.
            for _ in 0..<2 {
                _ = try TestThread {
                    for _ in 0..<rounds { eventLoop.execute { probe.visit(holdingEventLoop: eventLoop.inEventLoop) } }
                }
                Task(executorPreference: callers.loop) {
                    for _ in 0..<rounds { await actor.visit(probe) }
                }
            }
            #expect(
                waitUntil(within: .seconds(60)) { probe.visits.load(ordering: .acquiring) == 4 * rounds },
                "\(probe.visits.load(ordering: .acquiring)) of \(4 * rounds) visits in 60 s")
            #expect(probe.overlaps.load(ordering: .acquiring) == 0, "work ran side by side with the loop's own")
            #expect(probe.outsideEventLoop.load(ordering: .acquiring) == 0, "work ran without holding the event loop")
        }
    }

    /// The loop's end ends every pending task at once: a `cancel()` made once the loop's thread
    /// has ended has no effect, though the failures are told later, on the ended loop's
    /// executor — here held back by work the loop dropped before them, until the cancels are
    /// made.
    @Test(
        "a cancel after the loop ended leaves every pending scheduled task failed with shutdown, not cancelled",
        arguments: adapterBackends)
    func cancelAfterTheEnd(_ backend: BackendKind) async throws {
        let gate = Latch()
        let scheduled = try await onLoopThread(backend) { loop in
            let scheduled = (0..<50).map { index in loop.eventLoop.scheduleTask(in: .hours(1)) { index } }
            // Dropped at the loop's end (the thread ends without running it), so it runs
            // first on the ended loop's executor, and holds it.
            loop.eventLoop.execute { gate.wait(for: .seconds(60)) }
            return scheduled
        }
        try await offThePool {
            for task in scheduled { task.cancel() }
            gate.open()
            let outcomes = try scheduled.map { try outcome(of: $0.futureResult) }
            #expect(outcomes.filter { failed($0, with: .shutdown) }.count == 50)
        }
    }

    @Test("an adapter made after the loop ended behaves as ended", arguments: adapterBackends)
    func adapterMadeAfterTheEnd(_ backend: BackendKind) async throws {
        let loop = try await onLoopThread(backend) { loop in loop }
        try await offThePool { () throws in
            let scheduled = loop.eventLoop.scheduleTask(in: .milliseconds(1)) { 1 }
            #expect(failed(try outcome(of: scheduled.futureResult), with: .shutdown))
        }
    }

    @Test(
        "a LoopThread stopped with work in flight: every task runs once, every future completes",
        arguments: adapterBackends)
    func stopWithWorkInFlight(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            let executed = AtomicInt()
            var futures: [EventLoopFuture<Int>] = []
            for index in 0..<200 {
                eventLoop.execute { executed.increment() }
                futures.append(eventLoop.submit { index })
                futures.append(eventLoop.scheduleTask(in: .milliseconds(Int64(index % 3))) { index }.futureResult)
                if index == 100 { worker.stop() }
            }
            for future in futures {
                let result = try outcome(of: future)
                if case let .failure(error) = result {
                    #expect(error as? EventLoopError == .shutdown)
                }
            }
            #expect(executed.value == 200)
        }
    }
}

/// An actor whose executor is the loop is the event loop's too.
extension LoopActor {
    fileprivate func visit(_ probe: TurnProbe) {
        probe.visit(holdingEventLoop: loop.eventLoop.inEventLoop)
    }
}

/// Counts visits, visits made while another was inside, and visits off the event loop.
private final class TurnProbe: Sendable {
    private let inside = Atomic<Bool>(false)
    let visits = Atomic<Int>(0)
    let overlaps = Atomic<Int>(0)
    let outsideEventLoop = Atomic<Int>(0)

    func visit(holdingEventLoop: Bool) {
        if inside.exchange(true, ordering: .acquiringAndReleasing) { overlaps.add(1, ordering: .relaxed) }
        if !holdingEventLoop { outsideEventLoop.add(1, ordering: .relaxed) }
        // Stay a little, so that work served by a second executor would meet this one.
        let until = ContinuousClock.now + .microseconds(20)
        while ContinuousClock.now < until {}
        inside.store(false, ordering: .releasing)
        visits.add(1, ordering: .releasing)
    }
}
