extension Loop {
    /// The kinds of callback a loop calls out to: what ``Statistics/Callouts`` counts and what
    /// a ``StallMonitor`` names when a stall happens inside one.
    public enum CalloutKind: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// An ``Observer``'s handler.
        case observer = 1
        /// A ``Timer``'s handler.
        case timer
        /// A version-0 ``Source``'s `perform`.
        case version0Source
        /// A descriptor ``Source``'s handler.
        case descriptorSource
        /// A port ``Source``'s handler, called once per message.
        case portMessage
        /// A block queued by ``Loop/perform(_:)`` (and the jobs of a loop used as an executor).
        case block
        /// A drain of `DispatchQueue.main` (the main loop only): the blocks queued on it.
        case mainQueue

        /// The kind in words, as reports and the debug description print it.
        public var description: String {
            switch self {
            case .observer: "observer"
            case .timer: "timer"
            case .version0Source: "version0Source"
            case .descriptorSource: "descriptorSource"
            case .portMessage: "portMessage"
            case .block: "block"
            case .mainQueue: "mainQueue"
            }
        }
    }
}

extension Loop {
    /// Why a wait that slept ended: what ``Statistics/Wakeups`` counts. Each wakeup is counted
    /// once, under the first reason that applies, in the order of the cases.
    public enum WakeupReason: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// A timer fired.
        case timer
        /// A version-1 source was handled (or the backend's own sources were dispatched).
        case source
        /// The dispatch main queue was drained.
        case mainQueue
        /// Another thread woke the loop for this sleep: ``Loop/wakeUp()``, ``Loop/perform(_:)``,
        /// ``Source/signal()``, ``Loop/stop()``, a re-armed timer, a removed descriptor.
        case woken
        /// The wait reached the end it was planned with and found nothing to do: the run's
        /// timeout, or a timer invalidated or moved while the loop slept.
        case timeout
        /// None of these: a wakeup RunLoopKit is built never to have (a wait interrupted by a
        /// signal, or woken by a wake meant for an earlier sleep, goes back to sleep instead).
        case spurious

        /// The reason in words, as metrics label it: `timer`, `source`, `mainQueue`, `woken`,
        /// `timeout`, `spurious`.
        public var description: String {
            switch self {
            case .timer: "timer"
            case .source: "source"
            case .mainQueue: "mainQueue"
            case .woken: "woken"
            case .timeout: "timeout"
            case .spurious: "spurious"
            }
        }

        /// The reason a pass's sleep ended, from what the pass then did and how the wait went.
        init(firedTimers: Bool, handledSources: Bool, drainedMainQueue: Bool, woken: Bool, reachedDeadline: Bool) {
            self =
                if firedTimers {
                    .timer
                } else if handledSources {
                    .source
                } else if drainedMainQueue {
                    .mainQueue
                } else if woken {
                    .woken
                } else if reachedDeadline {
                    .timeout
                } else {
                    .spurious
                }
        }

        /// The reason's place in a table of counters.
        var index: Int { Int(rawValue) }
    }
}

extension Loop.CalloutKind {
    /// The kind's place in a table of counters (the raw values start at 1).
    var index: Int { Int(rawValue) - 1 }
}
