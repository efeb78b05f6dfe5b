import RunLoopKit
import TestSupport
import Testing

/// Re-arming and invalidating timers leaves no garbage behind: a mode's timer queue stays
/// within a small multiple of its live timers, however often they are re-armed (a watchdog
/// reset per packet) or however many are invalidated.
extension TimerTests {
    /// The most entries a queue with `live` timers may hold (see `TimerQueue`: stale entries
    /// are dropped once they outnumber the live ones).
    private static func bound(live: Int) -> Int { 2 * live + 64 }

    @Test(
        "a timer re-armed 100,000 times, in one mode and in the common modes, leaves each queue at its live size",
        arguments: backends)
    func rearmedOftenStaysSmall(_ backend: BackendKind) async throws {
        let sizes = try await onLoopThread(backend) { loop -> [Int] in
            loop.addCommonMode("tracking")
            let far = loop.now + .seconds(3600)
            let others = try (0..<10).map { index in try Loop.Timer(fireAt: far + .seconds(index)) { _ in } }
            for timer in others { loop.add(timer, to: .default) }
            let watchdog = try Loop.Timer(fireAt: far) { _ in }
            loop.add(watchdog, to: .common)
            var largest = 0
            for reset in 0..<100_000 {
                watchdog.nextFireInstant = far + .nanoseconds(reset)
                largest = max(largest, loop.timerQueueEntryCount(in: .default))
            }
            let sizes = [largest, loop.timerQueueEntryCount(in: .default), loop.timerQueueEntryCount(in: "tracking")]
            for timer in others + [watchdog] { timer.invalidate() }
            return sizes
        }
        #expect(sizes[0] <= Self.bound(live: 11), "the default mode's queue reached \(sizes[0]) entries for 11 timers")
        #expect(sizes[1] <= Self.bound(live: 11))
        #expect(sizes[2] <= Self.bound(live: 1), "the tracking mode's queue holds \(sizes[2]) entries for 1 timer")
    }

    @Test(
        "invalidating 9,000 of 10,000 timers shrinks their mode's queue; the rest still fire in order",
        arguments: backends)
    func invalidatedShrink(_ backend: BackendKind) async throws {
        let (size, fired) = try await onLoopThread(backend) { loop -> (Int, [Int]) in
            let start = loop.now
            let order = Lock<[Int]>([])
            let timers = try (0..<10_000).map { index in
                try Loop.Timer(fireAt: start + .microseconds(index)) { _ in order.withLock { $0.append(index) } }
            }
            for timer in timers { loop.add(timer, to: .default) }
            for (index, timer) in timers.enumerated() where !index.isMultiple(of: 10) { timer.invalidate() }
            let size = loop.timerQueueEntryCount(in: .default)
            while loop.run(timeout: generousDeadline) != .finished {}
            return (size, order.withLock { $0 })
        }
        #expect(size <= Self.bound(live: 1_000), "the queue holds \(size) entries for 1,000 live timers")
        #expect(fired == Array(stride(from: 0, to: 10_000, by: 10)))
    }
}
