/// Instants as signed nanoseconds from one fixed origin: the timer queues' scale.
///
/// `ContinuousClock.Instant` is resilient: every comparison and copy goes through its value
/// witnesses. The queues compare instants at every step of every sift, so they keep plain
/// `Int64`s instead, converted once when a timer is queued. 2^63 nanoseconds is 292 years
/// either side of the origin; instants beyond saturate, which changes nothing: a timer that far
/// ahead never fires, one that far behind is due either way.
package enum QueueTime {
    /// The origin: the first time a timer was queued in this process. Any instant works; a
    /// recent one keeps the values small.
    private static let origin = ContinuousClock.now

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
}
