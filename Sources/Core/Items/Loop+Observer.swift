import Synchronization

extension Loop {
    /// A callback at chosen points of a loop's runs.
    ///
    /// For each activity the loop takes a snapshot of the observers watching it, in ascending
    /// ``order`` (ties in the order they were added). An observer belongs to at most one loop.
    public final class Observer: Sendable, Hashable, CustomStringConvertible {
        /// The activities this observer is called for.
        public let activities: Activity
        /// Whether the observer stays valid after its first call.
        public let repeats: Bool
        /// Lower orders are called first.
        public let order: Int
        let handler: @Sendable (Observer, Activity) -> Void
        /// The actor the handler was written for; a loop refuses an observer it cannot run.
        let isolation: HandlerIsolation

        let valid = Atomic<Bool>(true)
        let isFiring = Atomic<Bool>(false)
        let loop = Lock<(loop: WeakLoop, isBound: Bool)>((WeakLoop(), false), rank: .item)

        /// Creates an observer.
        ///
        /// - Parameters:
        ///   - activities: the points of a run to be called at (an observer of none is never
        ///     called).
        ///   - repeats: `false` invalidates the observer after its first call.
        ///   - order: lower orders are called first.
        ///   - handler: called on the loop's thread with the observer and the activity. Written
        ///     in main-actor code, it is main-actor code and the observer can be added to
        ///     `Loop.main` only; see <doc:AsyncCodeAndLoops>.
        public init(
            activities: Activity,
            repeats: Bool = true,
            order: Int = 0,
            @_inheritActorContext handler: @escaping @isolated(any) @Sendable (Observer, Activity) -> Void
        ) {
            self.activities = activities
            self.repeats = repeats
            self.order = order
            let isolation = HandlerIsolation(handler.isolation)
            // See `HandlerIsolation`: the isolation is checked at each call instead.
            let call = unsafeBitCast(handler, to: (@Sendable (Observer, Activity) -> Void).self)
            self.handler = isolation.actor == nil ? call : isolation.checked(call)
            self.isolation = isolation
        }

        /// Whether the observer can still be called. Safe to call from any thread.
        public var isValid: Bool { valid.load(ordering: .acquiring) }

        /// Removes the observer from its loop; it is never called again.
        ///
        /// Called on the loop's thread, this is exact. Called from another thread, a call the
        /// loop had already begun to make may still happen (the loop does not hold a lock
        /// across callouts); once a block posted to the loop after this returns has run, no
        /// call is under way and none will come.
        ///
        /// Safe to call from any thread, also from inside its own callback.
        public func invalidate() {
            let owner: Loop? = loop.withLock { state in
                guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return nil }
                return state.loop.loop
            }
            owner?.detach(self)
        }

        /// The observer's activities and order, for messages.
        public var description: String { "Observer(\(activities), order \(order))" }

        /// Whether both are the same observer: observers are equal only to themselves.
        public static func == (lhs: Observer, rhs: Observer) -> Bool { lhs === rhs }
        /// Hashes the observer's identity.
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }
}

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
