import Synchronization

extension Loop {
    /// A callback at an instant, optionally repeating on a fixed grid.
    ///
    /// A timer belongs to at most one loop (several modes of it). It never fires early; with a
    /// tolerance it fires within that window after its instant, which lets the loop serve
    /// several timers with one wakeup. A repeating timer that missed instants fires once, then
    /// moves to the first instant of its grid still in the future.
    public final class Timer: Sendable, Hashable, CustomStringConvertible {
        struct State {
            var fireInstant: ContinuousClock.Instant
            var tolerance: Duration
            var loop = WeakLoop()
            var isBound = false
            var isFiring = false
            /// A next-fire instant set while the callback runs (inside it or from another
            /// thread); applied when it returns, in place of the automatic advance.
            var instantSetWhileFiring: ContinuousClock.Instant?
            /// The delay of a timer made with `after:`, until it is first added or re-armed:
            /// on a loop whose clock is not the real one (a virtual loop), it counts from that
            /// loop's time when first added, not from the real time it was made.
            var delayUntilAdded: Duration?
        }

        /// The repeat interval; `nil` for a one-shot timer.
        public let interval: Duration?
        /// Among timers due at the same instant, lower orders fire first.
        public let order: Int
        let handler: @Sendable (Timer) -> Void
        /// The actor the handler was written for; a loop refuses a timer it cannot run.
        let isolation: HandlerIsolation
        /// Whether the timer counts as an item of its modes (see `ModeState.hasSourcesOrTimers`).
        let keepsModeAlive: Bool
        /// Ties between equal instants and orders: the timer added to its loop first fires
        /// first. Set when the timer is first added.
        let addSequence = Atomic<UInt64>(0)
        /// Unique in the process, unlike an object's address.
        let identity = Ordinal.next()

        let state: Lock<State>
        let valid = Atomic<Bool>(true)
        /// Bumped whenever the queued instant changes, so stale queue entries are recognised.
        let generation = Atomic<UInt64>(0)

        /// Creates a timer that fires at `fireAt`, then every `interval` if given.
        ///
        /// - Parameters:
        ///   - fireAt: the first instant; an instant already past when the timer is added
        ///     becomes the moment it is added (and anchors a repeating timer's grid there).
        ///   - interval: the repeat interval, at least one nanosecond; `nil` fires once.
        ///   - tolerance: how late the timer may fire so the loop can coalesce wakeups; not
        ///     negative; clamped to half the interval for repeating timers.
        ///   - order: among timers due at the same instant, lower orders fire first.
        ///   - handler: called on the loop's thread with the timer. Written in main-actor code
        ///     (top-level code, a `@MainActor` function), it is main-actor code and the timer
        ///     can be added to `Loop.main` only; see <doc:AsyncCodeAndLoops>.
        /// - Throws: ``ArgumentError`` naming `interval` or `tolerance` when refused.
        public convenience init(
            fireAt: ContinuousClock.Instant,
            interval: Duration? = nil,
            tolerance: Duration = .zero,
            order: Int = 0,
            @_inheritActorContext handler: @escaping @isolated(any) @Sendable (Timer) -> Void
        ) throws(ArgumentError) {
            try self.init(
                fireAt: fireAt, interval: interval, tolerance: tolerance, order: order, keepsModeAlive: true,
                delayUntilAdded: nil, handler: handler)
        }

        /// The designated initializer; `keepsModeAlive: false` makes a timer that does not
        /// count as an item of its modes (a run in a mode with nothing else returns `finished`),
        /// for the jobs a task's sleep leaves on a loop (see `Loop+SchedulingExecutor.swift`).
        init(
            fireAt: ContinuousClock.Instant,
            interval: Duration?,
            tolerance: Duration,
            order: Int,
            keepsModeAlive: Bool,
            delayUntilAdded: Duration? = nil,
            handler: @escaping @isolated(any) @Sendable (Timer) -> Void
        ) throws(ArgumentError) {
            if let interval { try Timer.validate(interval: interval, argument: "interval") }
            try Timer.validate(tolerance: tolerance)
            self.keepsModeAlive = keepsModeAlive
            self.interval = interval
            self.order = order
            let isolation = HandlerIsolation(handler.isolation)
            // See `HandlerIsolation`: the isolation is checked at each call instead.
            let call = unsafeBitCast(handler, to: (@Sendable (Timer) -> Void).self)
            self.handler = isolation.actor == nil ? call : isolation.checked(call)
            self.isolation = isolation
            self.state = Lock(
                State(
                    fireInstant: fireAt, tolerance: Timer.clamp(tolerance, interval: interval),
                    delayUntilAdded: delayUntilAdded),
                rank: .item)
        }

        /// Creates a timer that fires `after` from now, then every `repeating` if given.
        ///
        /// "Now" is the real time of this call. On a loop whose clock is not the real one (a
        /// virtual loop, `RunLoopKitTesting`), the delay counts from the loop's time when the
        /// timer is first added, unless ``nextFireInstant`` was set before.
        ///
        /// - Throws: ``ArgumentError`` naming `after`, `repeating` or `tolerance` when refused.
        public convenience init(
            after delay: Duration,
            repeating interval: Duration? = nil,
            tolerance: Duration = .zero,
            order: Int = 0,
            @_inheritActorContext handler: @escaping @isolated(any) @Sendable (Timer) -> Void
        ) throws(ArgumentError) {
            if let interval { try Timer.validate(interval: interval, argument: "repeating") }
            try self.init(
                fireAt: .now + delay, interval: interval, tolerance: tolerance, order: order, keepsModeAlive: true,
                delayUntilAdded: delay, handler: handler)
        }

        /// The instant the timer fires next.
        ///
        /// Inside the callback it reads the instant being served. Setting it re-arms the
        /// timer (a past instant means now). Set while the callback runs, inside it or from
        /// another thread, it replaces a repeating timer's automatic advance, whether sooner or
        /// later than it; a past instant, or the instant being served, then means the next
        /// pass: the timer fires again at once. On an invalidated timer, setting has no effect
        /// and the last instant is kept. Safe to use from any thread.
        public var nextFireInstant: ContinuousClock.Instant {
            get { state.withLock { $0.fireInstant } }
            set {
                rearm { state in
                    state.delayUntilAdded = nil
                    if state.isFiring {
                        state.instantSetWhileFiring = newValue
                        return false
                    }
                    state.fireInstant = max(newValue, state.loop.loop?.now ?? .now)
                    return true
                }
            }
        }

        /// How late the timer may fire; for a repeating timer at most half its interval.
        ///
        /// Safe to call from any thread.
        public var tolerance: Duration { state.withLock { $0.tolerance } }

        /// Changes the tolerance.
        ///
        /// - Parameter tolerance: not negative; clamped to half the interval when repeating.
        /// - Throws: ``ArgumentError`` naming `tolerance` when negative.
        public func setTolerance(_ tolerance: Duration) throws(ArgumentError) {
            try Timer.validate(tolerance: tolerance)
            let clamped = Timer.clamp(tolerance, interval: interval)
            rearm { state in
                state.tolerance = clamped
                return !state.isFiring
            }
        }

        /// Whether the timer can still fire. Safe to call from any thread.
        public var isValid: Bool { valid.load(ordering: .acquiring) }

        /// Removes the timer from its loop; it never fires again.
        ///
        /// Called on the loop's thread, this is exact. Called from another thread, a call the
        /// loop had already begun to make may still happen (the loop does not hold a lock
        /// across callouts); once a block posted to the loop after this returns has run, no
        /// call is under way and none will come.
        ///
        /// Safe to call from any thread, also from inside the timer's own callback.
        public func invalidate() {
            let loop: Loop? = state.withLock { state in
                guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return nil }
                generation.add(1, ordering: .releasing)
                return state.loop.loop
            }
            loop?.detach(self)
        }

        /// The timer's interval (or `one-shot`) and order, for messages.
        public var description: String {
            "Timer(\(interval.map { "every \($0)" } ?? "one-shot"), order \(order))"
        }

        /// Whether both are the same timer: timers are equal only to themselves.
        public static func == (lhs: Timer, rhs: Timer) -> Bool { lhs === rhs }
        /// Hashes the timer's identity.
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

        /// Applies `change` to a valid timer; when it returns true, queues the new instant in
        /// every mode of the timer's loop.
        private func rearm(_ change: (inout State) -> Bool) {
            let requeue: (Loop, ContinuousClock.Instant, Duration, UInt64)? = state.withLock { state in
                guard isValid, change(&state) else { return nil }
                let generation = generation.add(1, ordering: .acquiringAndReleasing).newValue
                guard let loop = state.loop.loop else { return nil }
                return (loop, state.fireInstant, state.tolerance, generation)
            }
            if let (loop, instant, tolerance, generation) = requeue {
                loop.requeue(self, at: instant, tolerance: tolerance, generation: generation)
            }
        }

        /// Refuses an interval that is negative, zero, or below the clock's nanosecond.
        static func validate(interval: Duration, argument: String) throws(ArgumentError) {
            guard interval > .zero else {
                throw ArgumentError(
                    argument: argument, value: "\(interval)",
                    reason: interval == .zero
                        ? "a repeating timer's interval must not be zero" : "an interval must not be negative")
            }
            guard interval >= .nanoseconds(1) else {
                throw ArgumentError(
                    argument: argument, value: "\(interval)",
                    reason: "an interval must be at least one nanosecond, the clock's resolution")
            }
        }

        static func validate(tolerance: Duration) throws(ArgumentError) {
            guard tolerance >= .zero else {
                throw ArgumentError(
                    argument: "tolerance", value: "\(tolerance)", reason: "a tolerance must not be negative")
            }
        }

        static func clamp(_ tolerance: Duration, interval: Duration?) -> Duration {
            guard let interval else { return tolerance }
            return min(tolerance, interval / 2)
        }
    }
}
