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
    /// Whether this is the real clock (``continuous``). On any other clock, what would read the
    /// real time reads this one instead: the statistics' time asleep and awake, and a timer made
    /// with a delay (`Timer(after:)`) counts it from the loop's time when first added.
    package let readsRealTime: Bool
    /// Where a virtual clock's time began, if it says: what a SwiftNIO deadline on the loop's
    /// event loop counts from (as an `EmbeddedEventLoop`'s count from zero). `nil` on the real
    /// clock.
    package let origin: ContinuousClock.Instant?

    /// A clock whose time is `now()` (a virtual clock: not ``readsRealTime``), which began at
    /// `origin` if given; its ``nanoseconds`` are `now()` rounded down.
    package init(now: @escaping @Sendable () -> ContinuousClock.Instant, origin: ContinuousClock.Instant? = nil) {
        self.now = now
        self.nanoseconds = { QueueTime.nanosecondsRoundedDown(now()) }
        self.lag = 0
        self.readsRealTime = false
        self.origin = origin
    }

    private init(
        now: @escaping @Sendable () -> ContinuousClock.Instant, nanoseconds: @escaping @Sendable () -> Int64,
        lag: Int64
    ) {
        self.now = now
        self.nanoseconds = nanoseconds
        self.lag = lag
        self.readsRealTime = true
        self.origin = nil
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
