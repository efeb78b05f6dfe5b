import NIOCore
import RunLoopKit
import RunLoopKitNIO
import RunLoopKitTesting
import TestSupport
import Testing

/// The adapter on a loop on virtual time: its `now`, `scheduleTask`, `scheduleCallback`,
/// repeated tasks and futures follow the loop's time, as on NIO's `EmbeddedEventLoop`.
@Suite("RunLoopKitNIO: virtual time", .timeLimit(.minutes(1)))
struct VirtualTimeTests {
    /// `deadline` as whole seconds of the event loop's time ("+90s"), or nanoseconds when not whole.
    static func seconds(_ deadline: NIODeadline) -> String {
        let (seconds, rest) = deadline.uptimeNanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return rest == 0 ? "+\(seconds)s" : "+\(deadline.uptimeNanoseconds)ns"
    }

    @Test("now starts at zero and moves with the loop's time; scheduleTask(in:) runs at its instant, not before")
    func scheduleTaskIn() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let eventLoop = virtual.loop.eventLoop
        #expect(eventLoop.now == .uptimeNanoseconds(0))
        let record = EventRecord()
        let task = eventLoop.scheduleTask(in: .minutes(5)) { () -> String in
            record.append("ran at \(Self.seconds(eventLoop.now)), in the loop: \(eventLoop.inEventLoop)")
            return "done"
        }
        task.futureResult.whenSuccess { record.append("succeeded: \($0)") }
        try virtual.advance(by: .seconds(300) - .nanoseconds(1))
        #expect(record.all.isEmpty, "not early")
        #expect(eventLoop.now == .uptimeNanoseconds(300_000_000_000 - 1))
        try virtual.advance(by: .nanoseconds(1))
        #expect(record.all == ["ran at +300s, in the loop: true", "succeeded: done"])
    }

    @Test("deadlines from now run in deadline order; a task a task schedules runs within the same advance")
    func deadlinesAndChains() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let eventLoop = virtual.loop.eventLoop
        let record = EventRecord()
        try virtual.advance(by: .seconds(10))
        let start = eventLoop.now
        #expect(start == .uptimeNanoseconds(10_000_000_000))
        eventLoop.scheduleTask(deadline: start + .seconds(30)) { record.append("b \(Self.seconds(eventLoop.now))") }
        eventLoop.scheduleTask(deadline: start + .seconds(20)) {
            record.append("a \(Self.seconds(eventLoop.now))")
            eventLoop.scheduleTask(in: .seconds(25)) { record.append("chained \(Self.seconds(eventLoop.now))") }
        }
        try virtual.advance(by: .seconds(60))
        #expect(record.all == ["a +30s", "b +40s", "chained +55s"])
    }

    @Test("a cancelled task never runs and its future fails with cancelled; a repeated task runs at each interval")
    func cancelAndRepeat() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let eventLoop = virtual.loop.eventLoop
        let record = EventRecord()
        let cancelled = eventLoop.scheduleTask(in: .seconds(5)) { record.append("cancelled task ran") }
        cancelled.futureResult.whenFailure { record.append("failed: \($0 as? EventLoopError == .cancelled)") }
        cancelled.cancel()
        let repeated = eventLoop.scheduleRepeatedTask(initialDelay: .seconds(10), delay: .seconds(10)) { _ in
            record.append("tick \(Self.seconds(eventLoop.now))")
        }
        try virtual.advance(by: .seconds(45))
        repeated.cancel()
        try virtual.advance(by: .seconds(60))
        #expect(record.all == ["failed: true", "tick +10s", "tick +20s", "tick +30s", "tick +40s"])
    }

    @Test("a timeout built from a scheduled task fails a future that is not completed in time")
    func timeoutOnAFuture() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let eventLoop = virtual.loop.eventLoop
        let record = EventRecord()
        struct TimedOut: Error {}
        let promise = eventLoop.makePromise(of: String.self)
        let timeout = eventLoop.scheduleTask(in: .seconds(30)) { promise.fail(TimedOut()) }
        promise.futureResult.whenComplete { result in
            timeout.cancel()
            switch result {
            case let .success(value): record.append("reply \(value) at \(Self.seconds(eventLoop.now))")
            case .failure: record.append("timed out at \(Self.seconds(eventLoop.now))")
            }
        }
        // A reply that would come after 45 s comes too late.
        eventLoop.scheduleTask(in: .seconds(45)) { promise.succeed("late") }
        try virtual.advance(by: .seconds(29))
        #expect(record.all.isEmpty)
        try virtual.advance(by: .seconds(60))
        #expect(record.all == ["timed out at +30s"])
    }

    /// A callback handler that records when it was called, or cancelled.
    struct Callback: NIOScheduledCallbackHandler, Sendable {
        let name: String
        let record: EventRecord
        func handleScheduledCallback(eventLoop: some EventLoop) {
            record.append("\(name) at \(VirtualTimeTests.seconds(eventLoop.now))")
        }
        func didCancelScheduledCallback(eventLoop: some EventLoop) { record.append("\(name) cancelled") }
    }

    @Test("scheduleCallback(in:) follows the loop's time; a task at the distant future never runs, and is cancelled")
    func scheduleCallbackAndDistantFuture() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let eventLoop = virtual.loop.eventLoop
        let record = EventRecord()
        try eventLoop.scheduleCallback(in: .seconds(90), handler: Callback(name: "callback", record: record))
        let never = eventLoop.scheduleTask(deadline: .distantFuture) { record.append("distant future ran") }
        never.futureResult.whenFailure { record.append("distant future: \($0 as? EventLoopError == .cancelled)") }
        try virtual.advance(by: .seconds(89))
        #expect(record.all.isEmpty)
        try virtual.advance(by: .seconds(24 * 3600))
        #expect(record.all == ["callback at +90s"])
        never.cancel()
        try virtual.runUntilIdle()
        #expect(record.all == ["callback at +90s", "distant future: true"])
    }
}
