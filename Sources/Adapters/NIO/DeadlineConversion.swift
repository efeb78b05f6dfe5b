import NIOCore

/// From SwiftNIO's clock to the loop's.
///
/// A `NIODeadline` is an instant of `CLOCK_MONOTONIC`; a loop timer fires at an instant of
/// `ContinuousClock`, which on Linux is `CLOCK_BOOTTIME`. The two run at the same rate while the
/// machine is awake and differ by the time it has spent suspended, which only grows.
enum DeadlineConversion {
    /// The loop-clock instant at which `deadline` is due, never before it.
    ///
    /// The monotonic clock is read first and the boot clock second, so the boot reading is at
    /// least the boot instant matching the monotonic one: the result can only be late, by the
    /// time between the two reads (tens of nanoseconds, more if the thread is descheduled in
    /// between). A suspend after this conversion would make the timer fire early by the time
    /// suspended; the task checks the monotonic clock when its timer fires and waits again
    /// for the rest (see `ScheduledLoopTask.fire()`).
    static func instant(for deadline: NIODeadline) -> ContinuousClock.Instant {
        let monotonicNow = NIODeadline.now()
        let bootNow = ContinuousClock.now
        guard deadline > monotonicNow else { return bootNow }
        return bootNow + .nanoseconds((deadline - monotonicNow).nanoseconds)
    }
}
