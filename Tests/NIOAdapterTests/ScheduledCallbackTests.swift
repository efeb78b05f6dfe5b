import NIOCore
import RunLoopKit
import RunLoopKitNIO
import TestSupport
import Testing

/// `scheduleCallback`: the handler hears exactly once, either that the callback is due or that it
/// was cancelled — by `cancel()`, or by the loop's end while it was pending (NIOCore's
/// `NIOScheduledCallbackHandler.didCancelScheduledCallback` documents both).
@Suite("RunLoopKitNIO: scheduled callbacks")
struct ScheduledCallbackTests {
    /// A handler that writes what it hears, with the thread it heard it on, to a shared log.
    struct Recorder: NIOScheduledCallbackHandler, Sendable {
        let name: String
        let loop: Loop
        let log: Lock<[String]>
        let deadline: NIODeadline?

        init(_ name: String, loop: Loop, log: Lock<[String]>, deadline: NIODeadline? = nil) {
            (self.name, self.loop, self.log, self.deadline) = (name, loop, log, deadline)
        }

        func handleScheduledCallback(eventLoop: some EventLoop) {
            let early = deadline.map { NIODeadline.now() < $0 } ?? false
            record("ran\(early ? " early" : "")\(eventLoop === loop.eventLoop ? "" : " on another event loop")")
        }

        func didCancelScheduledCallback(eventLoop: some EventLoop) { record("cancelled") }

        private func record(_ event: String) {
            // Where the handler ran, as NIO code asks: on the loop's thread, or (at the loop's end)
            // on the thread serving the ended loop's work, the event loop is held.
            let place = loop.eventLoop.inEventLoop ? "in event loop" : "elsewhere"
            log.withLock { $0.append("\(name) \(event) \(place)") }
        }
    }

    @Test("a callback runs once on the loop's thread, never before its deadline", arguments: adapterBackends)
    func runs(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, _ in
            let log = Lock<[String]>([])
            let deadline = NIODeadline.now() + .milliseconds(10)
            let handle = try worker.loop.eventLoop.scheduleCallback(
                at: deadline, handler: Recorder("a", loop: worker.loop, log: log, deadline: deadline))
            let ranAfter = worker.loop.eventLoop.scheduleTask(deadline: deadline + .milliseconds(1)) {}
            _ = try value(of: ranAfter.futureResult)
            handle.cancel()
            #expect(log.withLock { $0 } == ["a ran in event loop"])
        }
    }

    @Test(
        "cancel calls didCancelScheduledCallback once, on the cancelling thread; the callback never runs",
        arguments: adapterBackends)
    func cancel(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, _ in
            let log = Lock<[String]>([])
            // An hour ahead: a thread descheduled between the two calls cannot let it run first.
            let handle = try worker.loop.eventLoop.scheduleCallback(
                in: .hours(1), handler: Recorder("a", loop: worker.loop, log: log))
            handle.cancel()
            handle.cancel()
            #expect(log.withLock { $0 } == ["a cancelled elsewhere"])
            // A block later, nothing more was heard.
            _ = try value(of: worker.loop.eventLoop.submit {})
            #expect(log.withLock { $0 } == ["a cancelled elsewhere"])
        }
    }

    @Test(
        "every callback pending at the loop's end hears didCancelScheduledCallback once, in deadline order; a later cancel does nothing",
        arguments: adapterBackends)
    func loopEnd(_ backend: BackendKind) async throws {
        let log = Lock<[String]>([])
        let (handles, eventLoop) = try await onLoopThread(backend) { loop in
            let eventLoop = loop.eventLoop
            let base = NIODeadline.now() + .hours(1)
            // Scheduled in reverse deadline order, two at each deadline.
            var handles: [NIOScheduledCallback] = []
            for index in (0..<5).reversed() {
                for half in ["a", "b"] {
                    let recorder = Recorder("\(index)\(half)", loop: loop, log: log)
                    handles.append(
                        try eventLoop.scheduleCallback(at: base + .seconds(Int64(index)), handler: recorder))
                }
            }
            // One cancelled before the end hears it then, and not again at the end.
            handles[0].cancel()
            return (handles, eventLoop)
        }
        try await offThePool {
            let atTheEnd = (0..<5).flatMap { index in ["\(index)a", "\(index)b"] }.filter { $0 != "4a" }
            let expected = ["4a cancelled in event loop"] + atTheEnd.map { "\($0) cancelled in event loop" }
            // The ended loop's executor tells them, on a thread of its own: wait for all ten.
            #expect(
                waitUntil(within: .seconds(60)) { log.withLock { $0.count } >= expected.count },
                "the handlers pending at the end were not all told within 60 s")
            #expect(log.withLock { $0 } == expected)
            for handle in handles { handle.cancel() }
            #expect(log.withLock { $0 } == expected)
            #expect(throws: EventLoopError.shutdown) {
                try eventLoop.scheduleCallback(in: .zero, handler: Recorder("late", loop: eventLoop.loop, log: log))
            }
            #expect(log.withLock { $0 } == expected, "a callback refused after the end must not be called")
        }
    }

    @Test("callbacks and tasks due at one deadline run in the order scheduled", arguments: adapterBackends)
    func equalDeadlines(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            let log = Lock<[String]>([])
            let deadline = NIODeadline.now() + .milliseconds(50)
            var last: Scheduled<Void>?
            for index in 0..<200 {
                if index.isMultiple(of: 2) {
                    _ = try eventLoop.scheduleCallback(
                        at: deadline, handler: Recorder("\(index)", loop: worker.loop, log: log))
                } else {
                    last = eventLoop.scheduleTask(deadline: deadline) {
                        log.withLock { $0.append("\(index) ran in event loop") }
                    }
                }
            }
            _ = try value(of: try #require(last).futureResult)
            #expect(log.withLock { $0 } == (0..<200).map { "\($0) ran in event loop" })
        }
    }

    @Test(
        "the isolated view schedules and cancels a callback whose handler is not Sendable", arguments: adapterBackends)
    func isolatedView(_ backend: BackendKind) async throws {
        /// Not Sendable: a class with mutable state, used only on the loop's thread.
        final class Counter: NIOScheduledCallbackHandler {
            var ran = 0
            var cancelled = 0
            func handleScheduledCallback(eventLoop: some EventLoop) { ran += 1 }
            func didCancelScheduledCallback(eventLoop: some EventLoop) { cancelled += 1 }
        }
        try await withWorker(backend) { worker, eventLoop in
            let counts = try value(
                of: eventLoop.flatSubmit { () -> EventLoopFuture<[Int]> in
                    let promise = eventLoop.makePromise(of: [Int].self)
                    let (cancelledOne, counter) = (Counter(), Counter())
                    let isolated = eventLoop.assumeIsolated()
                    do {
                        let handle = try isolated.scheduleCallback(in: .hours(1), handler: cancelledOne)
                        isolated.cancelScheduledCallback(handle)
                        _ = try isolated.scheduleCallback(in: .milliseconds(1), handler: counter)
                    } catch {
                        promise.fail(error)
                        return promise.futureResult
                    }
                    isolated.scheduleTask(in: .milliseconds(2)) {
                        promise.succeed([counter.ran, counter.cancelled, cancelledOne.ran, cancelledOne.cancelled])
                    }
                    return promise.futureResult
                })
            #expect(counts == [1, 0, 0, 1])
        }
    }
}
