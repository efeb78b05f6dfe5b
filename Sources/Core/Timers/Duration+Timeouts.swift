import Glibc

/// A duration handed to the kernel (or to libevent) as a timeout, in the unit and type each
/// interface takes. One rule for all of them, so that a wait never ends before the duration
/// asked:
///
/// - rounded up to the unit, never down (a timer must not fire early);
/// - a negative duration is zero;
/// - a duration too long for the type saturates at its largest value (or the cap stated).
extension Duration {
    /// Whole nanoseconds, rounded up; zero for a negative duration; saturating at `Int64.max`
    /// (292 years).
    package var nanosecondsRoundedUp: Int64 {
        if self <= .zero { return 0 }
        // Compared as durations first: `components` traps for durations past Int64 seconds.
        if self >= .nanoseconds(Int64.max) { return .max }
        let (seconds, attoseconds) = components
        // Shorter than Int64.max nanoseconds: neither the product nor the sum can overflow.
        return seconds * 1_000_000_000 + (attoseconds + 999_999_999) / 1_000_000_000
    }

    /// Whole milliseconds, rounded up (for `epoll_wait`); saturating at `Int32.max` (24 days).
    package var millisecondsRoundedUp: Int32 {
        Int32(clamping: nanosecondsRoundedUp.dividedRoundingUp(by: 1_000_000))
    }

    /// A `timespec`, rounded up to the nanosecond (for `epoll_pwait2`, and io_uring's
    /// `__kernel_timespec`, which has the same fields).
    package var timespecRoundedUp: timespec {
        let nanos = nanosecondsRoundedUp
        return timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
    }

    /// A `timeval`, rounded up to the microsecond (for libevent); capped at `Int32.max`
    /// seconds (68 years), so that adding it to the current time cannot overflow.
    package var timevalRoundedUp: timeval {
        let micros = min(nanosecondsRoundedUp.dividedRoundingUp(by: 1_000), Int64(Int32.max) * 1_000_000)
        return timeval(tv_sec: Int(micros / 1_000_000), tv_usec: Int(micros % 1_000_000))
    }
}

extension Int64 {
    /// `self / divisor`, rounded up (`self` is not negative).
    fileprivate func dividedRoundingUp(by divisor: Int64) -> Int64 {
        self / divisor + (self % divisor == 0 ? 0 : 1)
    }
}
