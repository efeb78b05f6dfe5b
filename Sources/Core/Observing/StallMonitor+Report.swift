extension StallMonitor {
    /// What a ``StallMonitor`` saw: a stall beginning, or ending.
    public struct Report: Sendable, Hashable, CustomStringConvertible {
        /// Which end of a stall a report is about.
        public enum Event: Sendable, Hashable, CustomStringConvertible {
            /// The loop has been in one stretch of work for at least the threshold.
            case began
            /// The stalled stretch is over: the loop went on to its wait, its next pass, or
            /// left its run.
            case ended

            /// `began` or `ended`.
            public var description: String {
                switch self {
                case .began: "began"
                case .ended: "ended"
                }
            }
        }

        /// Whether the stall began or ended.
        public let event: Event
        /// The step of the pass the loop was in when the stall was seen (an ``Event/ended``
        /// report repeats its ``Event/began`` report's).
        public let phase: Loop.PassPhase
        /// The callout under way when the stall was seen, or `nil` when the loop was in its
        /// own code (registering descriptors, say).
        public let callout: Loop.CalloutKind?
        /// For ``Event/began``: how long the stretch had lasted when the monitor saw it (at
        /// least the threshold). For ``Event/ended``: how long it lasted in all.
        public let duration: Duration

        /// Creates a report (for tests of code that handles reports).
        public init(event: Event, phase: Loop.PassPhase, callout: Loop.CalloutKind?, duration: Duration) {
            self.event = event
            self.phase = phase
            self.callout = callout
            self.duration = duration
        }

        /// The report in one line: the event, how long, and where the loop was.
        public var description: String {
            let place = callout.map { "a \($0) callout (phase \(phase))" } ?? "phase \(phase)"
            switch event {
            case .began: return "stall began: \(DurationText.approximate(duration, roundingUp: false)) in \(place)"
            case .ended: return "stall ended: \(DurationText.approximate(duration, roundingUp: false)) in \(place)"
            }
        }
    }
}
