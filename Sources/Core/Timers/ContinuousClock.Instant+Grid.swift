extension ContinuousClock.Instant {
    /// The first instant `self + k × interval` (k ≥ 1) strictly after `now`: missed instants of
    /// a repeating timer are skipped, never queued.
    func nextOnGrid(every interval: Duration, after now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        var next = self + interval
        guard next <= now else { return next }
        // Jump to about now in one step (a ratio of durations, exact enough below 2^52
        // intervals), then settle on the first grid instant after now.
        let missed = ((now - self) / interval).rounded(.down)
        if missed.isFinite, missed < 4e18 { next = self + interval * Int64(missed) }
        while next <= now { next += interval }
        while next - interval > now { next -= interval }
        return next
    }

    /// `self + duration`, saturating instead of trapping for enormous timeouts.
    func advanced(bySaturating duration: Duration) -> ContinuousClock.Instant {
        let limit = Duration.seconds(Int64.max / 4)
        return self + min(duration, limit)
    }
}
