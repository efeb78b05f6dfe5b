/// Where a loop reads the time: run deadlines, timer instants and clamping all go through it.
///
/// Real loops use ``continuous``. Core's own tests give a loop a virtual clock, so that a
/// scripted backend can let time pass without sleeping and scenarios replay exactly.
///
/// A pass reads the time as ``nanoseconds`` (``QueueTime``'s scale), never as an instant:
/// `ContinuousClock.Instant` is resilient, so every copy, comparison and sum of one in a pass
/// is a call through its value witnesses, and converting one to an integer a 128-bit division.
/// Measured on an idle loop (a 100 ms timer), that handling was about a quarter of the loop
/// thread's samples, spread over pages of the standard library that each wake touched anew.
package struct LoopClock: Sendable {
    /// The current instant.
    package let now: @Sendable () -> ContinuousClock.Instant
    /// The current time on ``QueueTime``'s scale; never ahead of ``now`` (so never early).
    package let nanoseconds: @Sendable () -> Int64
    /// How far ``nanoseconds`` may lag behind ``now`` (0 for a clock made from `now()`): a
    /// deadline that close is treated as reached by the sleep decision, which polls instead
    /// of sleeping for what would be less than the lag (see `decideSleep`).
    package let lag: Int64

    /// A clock whose time is `now()`; its ``nanoseconds`` are `now()` rounded down.
    package init(now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.now = now
        self.nanoseconds = { QueueTime.nanosecondsRoundedDown(now()) }
        self.lag = 0
    }

    private init(
        now: @escaping @Sendable () -> ContinuousClock.Instant, nanoseconds: @escaping @Sendable () -> Int64,
        lag: Int64
    ) {
        self.now = now
        self.nanoseconds = nanoseconds
        self.lag = lag
    }

    /// `ContinuousClock`, the clock of every loop outside Core's tests: its nanoseconds are
    /// `clock_gettime(CLOCK_BOOTTIME)` (the clock `ContinuousClock` reads) counted from
    /// ``QueueTime``'s anchor, captured here: a global read at each call would be a
    /// `swift_once` call each time.
    package static let continuous: LoopClock = {
        let anchor = QueueTime.anchorBoot
        return LoopClock(now: { .now }, nanoseconds: { Nanoseconds.now() &- anchor }, lag: QueueTime.anchorLag)
    }()
}
