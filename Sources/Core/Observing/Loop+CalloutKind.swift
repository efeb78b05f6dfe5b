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
