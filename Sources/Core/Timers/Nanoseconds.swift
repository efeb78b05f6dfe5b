import Glibc

/// Time as whole nanoseconds: what the statistics' counters and the words a loop publishes for
/// stall monitors hold (an atomic holds an integer, not a `Duration`).
enum Nanoseconds {
    /// The time now on the clock `ContinuousClock` reads (`CLOCK_BOOTTIME`: it goes on while
    /// the machine is suspended), in nanoseconds.
    ///
    /// Read directly rather than through `ContinuousClock.now`: an instant of that clock is a
    /// resilient type, which a loop's pass cannot keep or subtract without calls through its
    /// value witnesses, and converting one to an integer costs a 128-bit division. Statistics
    /// and stall monitors therefore measure real time even on a loop that Core's tests give a
    /// virtual clock (``LoopClock``).
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }

    /// `duration` in whole nanoseconds, truncated toward zero; saturating past 292 years.
    static func of(_ duration: Duration) -> Int64 {
        Int64(clamping: duration.attoseconds / 1_000_000_000)
    }
}
