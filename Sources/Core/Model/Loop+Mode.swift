extension Loop {
    /// The name of a run-loop mode.
    ///
    /// A loop runs in exactly one mode at a time and only serves the items of that mode. Modes
    /// come into existence when an item is added to them, a block is queued for them, or they
    /// are made common. ``common`` is not a mode but stands for the set of common modes.
    public struct Mode: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The mode's number in the process's table of mode names (``ModeNames``): equal
        /// names, equal numbers. A loop looks modes up on every pass and every block it runs,
        /// so a mode is compared, hashed and copied as one integer, never as its name.
        @usableFromInline let index: Int

        /// Creates a mode with the given name.
        ///
        /// Names are interned: the first mode made with a name costs a look-up under a
        /// process-wide lock; keep a mode you use often in a `static let`.
        public init(_ name: String) {
            index = ModeNames.index(of: name)
        }

        /// Creates a mode from a string literal.
        public init(stringLiteral name: String) { self.init(name) }

        @usableFromInline init(index: Int) { self.index = index }

        /// The mode's name.
        public var name: String { ModeNames.name(at: index) }

        /// Whether two modes have the same name.
        public static func == (a: Mode, b: Mode) -> Bool { a.index == b.index }

        /// Hashes the mode by its number (equal names, equal numbers).
        public func hash(into hasher: inout Hasher) {
            hasher.combine(index)
        }

        /// The mode every loop has; initially the only common mode.
        @inlinable public static var `default`: Mode { Mode(index: 0) } // ModeNames.defaultIndex

        /// The pseudo-mode that stands for every common mode, now and later.
        ///
        /// Adding an item to `common` adds it to each common mode; running `common` is a usage
        /// error that returns ``RunResult/finished`` at once.
        @inlinable public static var common: Mode { Mode(index: 1) } // ModeNames.commonIndex

        /// The mode's name.
        public var description: String { name }
    }

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

    /// The points of a run that an ``Observer`` can watch.
    public struct Activity: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// The activities as bits, one per activity.
        public let rawValue: UInt32
        /// Creates a set of activities from its bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// A run is starting.
        public static let entry = Activity(rawValue: 1 << 0)
        /// A pass is about to handle timers.
        public static let beforeTimers = Activity(rawValue: 1 << 1)
        /// A pass is about to handle version-0 sources.
        public static let beforeSources = Activity(rawValue: 1 << 2)
        /// The loop is about to sleep.
        public static let beforeWaiting = Activity(rawValue: 1 << 5)
        /// The loop has woken from its sleep.
        public static let afterWaiting = Activity(rawValue: 1 << 6)
        /// A run is ending.
        public static let exit = Activity(rawValue: 1 << 7)
        /// Every activity.
        public static let allActivities: Activity = [
            .entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit,
        ]

        /// One activity's name (`beforeWaiting`), or several in brackets (`[entry, exit]`).
        public var description: String {
            let names: [(Activity, String)] = [
                (.entry, "entry"), (.beforeTimers, "beforeTimers"), (.beforeSources, "beforeSources"),
                (.beforeWaiting, "beforeWaiting"), (.afterWaiting, "afterWaiting"), (.exit, "exit"),
            ]
            let present = names.filter { contains($0.0) }.map(\.1)
            return present.count == 1 ? present[0] : "[" + present.joined(separator: ", ") + "]"
        }
    }
}
