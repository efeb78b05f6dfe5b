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
        try await offThePool {
            let ran = AtomicInt()
            let future = try onOwnLoop(backend) { loop in
                loop.eventLoop.scheduleTask(in: .hours(1)) { ran.store(1) }.futureResult
            }
            #expect(failed(try outcome(of: future), with: .shutdown))
            #expect(ran.value == 0)
        }
    }

    @Test(
        "tasks the loop dropped at its end run after it, in order, holding the event loop; submit fails with shutdown",
        arguments: adapterBackends)
    func droppedWorkIsServed(_ backend: BackendKind) async throws {
        try await offThePool {
            let log = Lock<[String]>([])
            let (promised, submitted, chained, eventLoop) = try onOwnLoop(backend) { loop in
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
        "after the end: execute runs on the calling thread holding the event loop; scheduleTask and submit fail with shutdown",
        arguments: adapterBackends)
    func afterTheEnd(_ backend: BackendKind) async throws {
        try await offThePool {
            let worker = try LoopThread(backend: backend)
            let eventLoop = worker.loop.eventLoop
            worker.stop()
            let ranHere = Lock<Bool?>(nil)
            eventLoop.execute { ranHere.withLock { $0 = eventLoop.inEventLoop } }
            #expect(ranHere.withLock { $0 } == true)
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

    @Test("an adapter made after the loop ended behaves as ended", arguments: adapterBackends)
    func adapterMadeAfterTheEnd(_ backend: BackendKind) async throws {
        try await offThePool {
            let loop = try onOwnLoop(backend) { loop in loop }
            let scheduled = loop.eventLoop.scheduleTask(in: .milliseconds(1)) { 1 }
            #expect(failed(try outcome(of: scheduled.futureResult), with: .shutdown))
        }
    }

    @Test(
        "a LoopThread stopped with work in flight: every task runs once, every future completes",
        arguments: adapterBackends)
    func stopWithWorkInFlight(_ backend: BackendKind) async throws {
        try await offThePool {
            let worker = try LoopThread(backend: backend)
            let eventLoop = worker.loop.eventLoop
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
