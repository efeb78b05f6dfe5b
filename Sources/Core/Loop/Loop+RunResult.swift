extension Loop {
    /// Why ``Loop/run(_:timeout:returnAfterSourceHandled:)`` returned.
    public enum RunResult: Sendable, Hashable, CustomStringConvertible {
        /// The mode did not exist or had no sources, timers or blocks left.
        case finished
        /// ``Loop/stop()`` ended the run.
        case stopped
        /// The run's timeout passed (a run with a zero or negative timeout always ends here).
        case timedOut
        /// A source was handled and the run was asked to return after one.
        case handledSource

        /// The case's name: `finished`, `stopped`, `timedOut` or `handledSource`.
        public var description: String {
            switch self {
            case .finished: "finished"
            case .stopped: "stopped"
            case .timedOut: "timedOut"
            case .handledSource: "handledSource"
            }
        }
    }
}
