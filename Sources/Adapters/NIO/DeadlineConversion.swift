import NIOCore
import Synchronization

/// From SwiftNIO's clock to the loop's.
///
/// A `NIODeadline` is an instant of `CLOCK_MONOTONIC`; a loop timer fires at an instant of
/// `ContinuousClock`, which on Linux is `CLOCK_BOOTTIME`. The two run at the same rate while the
/// machine is awake and differ by the time it has spent suspended, which only grows.
///
/// Every deadline is converted with one offset between the two clocks, kept here and measured
/// again on each conversion: so one deadline is always one loop instant, and tasks scheduled for
/// the same deadline fire in the order they were scheduled (the loop's timers at one instant fire
/// by when they were first added, rule T11), as on NIO's own loops. Reading both clocks for each conversion,
/// as a plain "now plus the time left" does, made one deadline a different instant a few
/// nanoseconds apart at each call.
enum DeadlineConversion {
    /// How far a fresh measurement may lie from the kept offset before it replaces it: wider than
    /// the bracket of a measurement taken without being descheduled (tens of nanoseconds), far
    /// narrower than any suspend.
    static let tolerance: Int64 = 50_000

    /// A bracket this narrow (nanoseconds) is taken without measuring again: reads not
    /// descheduled between them take tens of nanoseconds.
    static let narrowEnough: Int64 = 1_000

    /// The boot-clock instant that offsets count from (a `ContinuousClock.Instant` has no public
    /// nanosecond count).
    private static let origin = ContinuousClock.now

    /// The kept offset: nanoseconds of the boot clock since ``origin`` minus nanoseconds of the
    /// monotonic clock, at one moment; `Int64.min` before the first measurement.
    private static let keptOffset = Atomic<Int64>(.min)

    /// The loop-clock instant at which `deadline` is due, never before it while the kept offset
    /// holds (a suspend since it was measured is noticed at the next conversion, and by the task,
    /// which checks the monotonic clock when its timer fires; see `ScheduledLoopTask`).
    static func instant(for deadline: NIODeadline) -> ContinuousClock.Instant {
        let offset = currentOffset()
        // In Duration's 128-bit arithmetic: `.distantFuture` (Int64.max nanoseconds) plus an
        // offset does not overflow.
        return origin + .nanoseconds(Int64(clamping: deadline.uptimeNanoseconds)) + .nanoseconds(offset)
    }

    /// The loop-clock instant at which what is left of `deadline` by the monotonic clock now has
    /// passed: for a task whose timer fired before its deadline.
    static func restOf(_ deadline: NIODeadline) -> ContinuousClock.Instant {
        let monotonicNow = NIODeadline.now()
        let bootNow = ContinuousClock.now
        guard deadline > monotonicNow else { return bootNow }
        return bootNow + .nanoseconds((deadline - monotonicNow).nanoseconds)
    }

    /// The kept offset, replaced first when a measurement shows it wrong by more than
    /// ``tolerance``.
    ///
    /// A measurement reads the monotonic clock, the boot clock and the monotonic clock again:
    /// the true offset lies between the boot reading minus the second monotonic reading and the
    /// boot reading minus the first. The kept offset is the upper end of the bracket, so a timer
    /// is late by at most the bracket's width and never early. It is replaced only when the
    /// whole bracket lies more than ``tolerance`` away from it: the machine was suspended (the
    /// true offset grew), or the kept one came from a wide bracket (its thread was descheduled
    /// between the reads). An ordinary measurement never moves it, so equal deadlines stay one
    /// instant.
    private static func currentOffset() -> Int64 {
        let kept = keptOffset.load(ordering: .relaxed)
        let bracket = measure()
        if kept != .min, bracket.lower <= kept + tolerance, bracket.upper >= kept - tolerance { return kept }
        // The first measurement, or a changed offset: the narrowest of up to four brackets
        // (stopping at one narrow enough), so a descheduling between reads does not set the
        // offset for everything after it. (A wide one kept anyway is replaced at the next
        // conversion whose bracket lies more than `tolerance` from it.)
        var best = bracket
        for _ in 0..<3 where best.upper - best.lower > narrowEnough {
            let next = measure()
            if next.upper - next.lower < best.upper - best.lower { best = next }
        }
        // Threads that measure at once agree on one value: the first to replace `kept` wins.
        let (exchanged, current) = keptOffset.compareExchange(
            expected: kept, desired: best.upper, ordering: .relaxed)
        return exchanged ? best.upper : current
    }

    private static func measure() -> (lower: Int64, upper: Int64) {
        let before = Int64(clamping: NIODeadline.now().uptimeNanoseconds)
        let boot = nanoseconds(ContinuousClock.now - origin)
        let after = Int64(clamping: NIODeadline.now().uptimeNanoseconds)
        return (boot - after, boot - before)
    }

    /// `duration` in whole nanoseconds, rounded toward zero.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
