import RunLoopCore
import Testing

/// The timer queues keep instants as whole nanoseconds: converting must never make a timer due
/// early (instants round up, the time they are compared with rounds down), must keep the order
/// of instants a nanosecond apart, and must saturate far instants instead of trapping.
@Suite("Timer queue time scale")
struct QueueTimeTests {
    @Test("instants round up, limits round down, whole nanoseconds stay exact, order is kept")
    func rounding() {
        let base = ContinuousClock.now
        let whole = base + .nanoseconds(1_000)
        #expect(QueueTime.nanosecondsRoundedUp(whole) == QueueTime.nanosecondsRoundedDown(whole))
        #expect(QueueTime.instant(QueueTime.nanosecondsRoundedUp(whole)) == whole)
        let between = whole + .nanoseconds(1) / 3
        #expect(QueueTime.nanosecondsRoundedUp(between) == QueueTime.nanosecondsRoundedUp(whole) + 1)
        #expect(QueueTime.nanosecondsRoundedDown(between) == QueueTime.nanosecondsRoundedDown(whole))
        let earlier = base - .seconds(5) - .nanoseconds(1) / 3
        #expect(QueueTime.nanosecondsRoundedDown(earlier) == QueueTime.nanosecondsRoundedUp(earlier) - 1)
        #expect(QueueTime.nanosecondsRoundedUp(whole + .nanoseconds(1)) > QueueTime.nanosecondsRoundedUp(whole))
    }

    /// A pass reads the time from `LoopClock.continuous.nanoseconds` (`clock_gettime`), timers
    /// are queued from instants: read after an instant, it must not be behind it by more than
    /// the clock's lag, and read before one it must never be ahead of it, or a timer could fire
    /// early.
    @Test("the pass's clock is never ahead of ContinuousClock, and behind it by at most the anchor's lag")
    func passClockAgreesWithInstants() {
        let clock = LoopClock.continuous
        var ahead: [Int64] = []
        var behindTooFar: [Int64] = []
        for _ in 0..<10_000 {
            let before = clock.nanoseconds()
            let instant = QueueTime.nanosecondsRoundedDown(ContinuousClock.now)
            let after = clock.nanoseconds()
            if before > instant { ahead.append(before - instant) }
            if after < instant - clock.lag { behindTooFar.append(instant - after) }
        }
        #expect(ahead.isEmpty, "the pass's clock ran ahead of ContinuousClock.now by \(ahead.prefix(5)) ns")
        #expect(
            behindTooFar.isEmpty,
            "the pass's clock lagged by \(behindTooFar.prefix(5)) ns, more than its lag \(clock.lag)")
    }

    @Test("instants centuries away saturate instead of trapping")
    func saturation() {
        let now = ContinuousClock.now
        #expect(QueueTime.nanosecondsRoundedUp(now + .seconds(Int64.max / 4)) == .max)
        #expect(QueueTime.nanosecondsRoundedDown(now - .seconds(Int64.max / 4)) == .min + 1)
        #expect(Int64.max.addingSaturating(1) == .max)
    }
}
