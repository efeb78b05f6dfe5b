/// The decisions of a ``StallMonitor``'s watchdog, apart from its thread and clock: fed what
/// it reads from a loop's ``LoopProgress`` at each look, it says what to report.
///
/// A stall is a stretch of work (see ``LoopProgress``) that has lasted `threshold` or longer.
/// Each stall is reported once when first seen and once when a later look finds the loop in
/// another stretch (or idle). A stretch's start is the loop's own time when the word is
/// stamped, otherwise the first look that saw it; the end is the next stretch's stamped start,
/// otherwise the look that saw it.
package struct StallTracker {
    /// In nanoseconds.
    let threshold: Int64

    private struct Stretch {
        let number: UInt64
        let start: Int64
        /// Where the loop was when the stall was seen, and how long it had lasted; `nil` until
        /// it is.
        var stalledAt: (phase: Loop.PassPhase, callout: Loop.CalloutKind?, lasted: Int64)?
    }

    private var current: Stretch?

    /// A tracker of stalls of at least `threshold` nanoseconds.
    package init(threshold: Int64) {
        self.threshold = threshold
    }

    /// One look: the loop's ``LoopProgress/word`` and ``LoopProgress/since`` (read in that
    /// order) and the time now, all in ``Nanoseconds/now()``.
    package mutating func observe(word: UInt64, since: Int64, now: Int64) -> [StallMonitor.Report] {
        let reading = LoopProgress.Reading(word)
        var reports: [StallMonitor.Report] = []
        if current?.number != reading.stretch || reading.phase == nil {
            if let ended = current, let (phase, callout, lasted) = ended.stalledAt {
                // The loop reads the instant that ends a stretch a moment before it publishes
                // it, so a look in between may have seen the stretch last a little longer.
                let end = reading.isStamped ? since : now
                reports.append(
                    StallMonitor.Report(
                        event: .ended, phase: phase, callout: callout,
                        duration: .nanoseconds(max(lasted, end - ended.start))))
            }
            current = reading.phase.map { _ in
                Stretch(number: reading.stretch, start: reading.isStamped ? min(since, now) : now)
            }
        }
        if var stretch = current, stretch.stalledAt == nil, let phase = reading.phase, now - stretch.start >= threshold
        {
            stretch.stalledAt = (phase, reading.callout, now - stretch.start)
            current = stretch
            reports.append(
                StallMonitor.Report(
                    event: .began, phase: phase, callout: reading.callout, duration: .nanoseconds(now - stretch.start)))
        }
        return reports
    }

    /// A ``LoopProgress/word`` as the loop would publish it (for tests of the decisions).
    package static func word(
        stretch: UInt64, phase: Loop.PassPhase?, callout: Loop.CalloutKind? = nil, stamped: Bool
    ) -> UInt64 {
        stretch << 8 | (stamped ? LoopProgress.stampedBit : 0) | UInt64(Loop.place(phase, callout))
    }
}
