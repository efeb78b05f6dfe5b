extension Loop {
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
