/// Instants as signed nanoseconds from one fixed origin: the timer queues' scale.
///
/// `ContinuousClock.Instant` is resilient: every comparison and copy goes through its value
/// witnesses. The queues compare instants at every step of every sift, so they keep plain
/// `Int64`s instead, converted once when a timer is queued. 2^63 nanoseconds is 292 years
/// either side of the origin; instants beyond saturate, which changes nothing: a timer that far
/// ahead never fires, one that far behind is due either way.
package enum QueueTime {
    /// The origin: the first time a timer was queued or a loop read the time in this process.
    /// Any instant works; a recent one keeps the values small.
    private static var origin: ContinuousClock.Instant { anchor.instant }

    /// The origin, with `CLOCK_BOOTTIME` (the clock `ContinuousClock` reads) in nanoseconds
    /// read just before and just after it: ``LoopClock/continuous`` counts from the reading
    /// after, which is at or after the origin's own time, so it never runs ahead of the
    /// instants it is compared with: a timer is never taken for due early, at worst
    /// ``anchorLag`` late.
    private static let anchor = makeAnchor()

    /// Reads the anchor a few times and keeps the tightest (the first reading of
    /// `ContinuousClock.now` in a process binds its symbols: microseconds), reading on while
    /// the lag is above a microsecond (a thread preempted between two readings), for at most
    /// a hundred tries: the sleep decision polls through deadlines within the lag, and that
    /// must stay far too short to be a busy wait.
    private static func makeAnchor() -> (before: Int64, instant: ContinuousClock.Instant, boot: Int64) {
        var best = (before: Nanoseconds.now(), instant: ContinuousClock.now, boot: Nanoseconds.now())
        for attempt in 0..<100 {
            if attempt >= 3, best.boot &- best.before <= 1_000 { break }
            // In this order: before, instant, after.
            let before = Nanoseconds.now()
            let instant = ContinuousClock.now
            let boot = Nanoseconds.now()
            if boot &- before < best.boot &- best.before { best = (before, instant, boot) }
        }
        return best
    }

    /// The anchor's reading after the origin, which ``LoopClock/continuous`` captures once
    /// (the anchor holds a resilient instant: reading a field of it at each call would go
    /// through that type's value witnesses).
    static var anchorBoot: Int64 { anchor.boot }

    /// The most a time counted from ``anchorBoot`` may lag the exact offset of
    /// `ContinuousClock.now` (tens of nanoseconds): the time between the two readings around
    /// the origin.
    static var anchorLag: Int64 { anchor.boot &- anchor.before }

    /// `instant`, rounded up to the nanosecond (so that nothing is taken for due early).
    package static func nanosecondsRoundedUp(_ instant: ContinuousClock.Instant) -> Int64 {
        nanoseconds(instant, roundingUp: true)
    }

    /// `instant`, rounded down to the nanosecond.
    package static func nanosecondsRoundedDown(_ instant: ContinuousClock.Instant) -> Int64 {
        nanoseconds(instant, roundingUp: false)
    }

    /// The instant `nanoseconds` after the origin.
    package static func instant(_ nanoseconds: Int64) -> ContinuousClock.Instant {
        origin + .nanoseconds(nanoseconds)
    }

    private static func nanoseconds(_ instant: ContinuousClock.Instant, roundingUp: Bool) -> Int64 {
        let offset = instant - origin
        // Compared as durations first: `components` traps past Int64 seconds.
        if offset >= .nanoseconds(Int64.max) { return .max }
        if offset <= .nanoseconds(Int64.min + 1) { return .min + 1 }
        let (seconds, attoseconds) = offset.components
        // `components` keeps the sign in both parts; whole nanoseconds truncate toward zero.
        var nanos = seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
        let remainder = attoseconds % 1_000_000_000
        if roundingUp, remainder > 0 { nanos &+= 1 }
        if !roundingUp, remainder < 0 { nanos &-= 1 }
        return nanos
    }
}

extension Int64 {
    /// `self + other`, at `Int64.max` instead of overflowing (`other` is not negative).
    package func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    /// `self - other`, at `Int64.max` or `Int64.min` instead of overflowing.
    package func subtractingSaturating(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        guard overflow else { return difference }
        return other < 0 ? .max : .min
    }
}
