/// Instants and durations as whole nanoseconds: what the statistics' counters and the words a
/// loop publishes for stall monitors hold (an atomic holds an integer, not a `Duration`).
///
/// Through `Duration.attoseconds`, not `Duration.components`: this runs on every pass of a
/// monitored loop and every sleep, and `components` costs a second 128-bit division.
enum Nanoseconds {
    /// Any fixed instant does; a recent one keeps the values small.
    private static let origin = ContinuousClock.now

    /// `instant` as nanoseconds since a fixed origin of this process (negative before it).
    static func of(_ instant: ContinuousClock.Instant) -> Int64 {
        of(instant - origin)
    }

    /// `duration` in whole nanoseconds, truncated toward zero; saturating past 292 years.
    static func of(_ duration: Duration) -> Int64 {
        Int64(clamping: duration.attoseconds / 1_000_000_000)
    }
}
