extension Loop {
    /// Cheap, always-on counters of what a loop has done, as a snapshot.
    ///
    /// The loop's thread keeps the counters as it goes (plain atomic stores, no lock); any
    /// thread reads them with ``Loop/statistics``. Each counter is read atomically, but a
    /// snapshot taken while the loop runs may hold counters from moments a few instructions
    /// apart; one taken while the loop is not running is exact.
    ///
    /// A *wakeup* is the end of a wait that slept (not a poll); each is counted once, under
    /// the first reason that applies: a timer fired, a version-1 source was handled, the
    /// dispatch main queue was drained, another thread woke the loop (``Loop/wakeUp()``,
    /// ``Loop/perform(_:)``, ``Source/signal()``, ``Loop/stop()``, a re-armed timer, a removed
    /// descriptor), the wait reached the end it was planned with (the run's timeout, or a
    /// timer that was invalidated or moved meanwhile), or no reason at all — a *spurious*
    /// wakeup, which RunLoopKit is built never to have.
    public struct Statistics: Sendable, Hashable {
        /// Passes made by every run of the loop.
        public var passes: UInt64 = 0
        /// Waits that slept, by why they ended: `wakeups[.timer]`, and `wakeups.total` for all.
        public var wakeups = Wakeups()

        /// Time the loop's thread slept in its backend, waiting for work (polls excluded).
        /// Whole nanoseconds, on the loop's clock (on a `RunLoopKitTesting` virtual loop, its
        /// virtual time: then ``timeAwake`` stays zero, since a callout takes no virtual time).
        public var timeAsleep: Duration = .zero
        /// Time the loop's thread spent inside runs of the loop and not asleep: passes,
        /// callouts and polls. Whole nanoseconds. `timeAwake + timeAsleep` is the time spent
        /// in runs.
        public var timeAwake: Duration = .zero

        /// Callouts made, by kind: each call of a handler, `perform` or block.
        public var callouts = Callouts()

        /// How late the timers fired: each fire is counted in one bucket.
        public var timerLateness = TimerLateness()

        /// Readiness events the backend reported for version-1 sources' descriptors: one per
        /// ready descriptor per wait, however many sources watch it. A pipe made readable and
        /// drained by its handler is one event; one left readable is an event in every pass.
        /// Events of the dispatch main queue are counted as ``Callouts/mainQueue`` drains.
        public var descriptorEvents: UInt64 = 0

        /// Timers fired: the same as `callouts.timer`, and as `timerLateness.total`.
        public var timerFires: UInt64 { callouts.timer }

        /// Blocks run: the same as `callouts.block`.
        public var blocksRun: UInt64 { callouts.block }

        /// Creates a snapshot with every counter at zero.
        public init() {}

        /// Wakeups counted by ``Loop/WakeupReason``.
        public struct Wakeups: Sendable, Hashable {
            var table = CounterTable<8>()

            /// Creates counts at zero.
            public init() {}

            /// The wakeups counted for `reason`.
            public subscript(reason: WakeupReason) -> UInt64 {
                get { table[reason.index] }
                set { table[reason.index] = newValue }
            }

            /// Every wakeup, whatever its reason.
            public var total: UInt64 { table.total }
        }

        /// Callouts made by a loop, by ``Loop/CalloutKind``.
        public struct Callouts: Sendable, Hashable {
            var table = CounterTable<8>()

            /// Creates counts at zero.
            public init() {}

            /// The count of `kind`.
            public subscript(kind: CalloutKind) -> UInt64 {
                get { table[kind.index] }
                set { table[kind.index] = newValue }
            }

            /// Observer handlers called.
            public var observer: UInt64 {
                get { self[.observer] }
                set { self[.observer] = newValue }
            }
            /// Timer handlers called: one per fire.
            public var timer: UInt64 {
                get { self[.timer] }
                set { self[.timer] = newValue }
            }
            /// Version-0 sources performed.
            public var version0Source: UInt64 {
                get { self[.version0Source] }
                set { self[.version0Source] = newValue }
            }
            /// Descriptor-source handlers called.
            public var descriptorSource: UInt64 {
                get { self[.descriptorSource] }
                set { self[.descriptorSource] = newValue }
            }
            /// Messages handed to port-source handlers (one call each).
            public var portMessage: UInt64 {
                get { self[.portMessage] }
                set { self[.portMessage] = newValue }
            }
            /// Blocks run: those queued by ``Loop/perform(_:)`` and its variants, and the jobs of
            /// a loop used as an executor.
            public var block: UInt64 {
                get { self[.block] }
                set { self[.block] = newValue }
            }
            /// Drains of the dispatch main queue (the main loop only); each runs the blocks
            /// queued on it before the drain.
            public var mainQueue: UInt64 {
                get { self[.mainQueue] }
                set { self[.mainQueue] = newValue }
            }

            /// Every callout, whatever its kind.
            public var total: UInt64 { table.total }
        }

        /// Timer fires counted by lateness: how long after its fire instant a timer's handler
        /// was called, in five buckets bounded by powers of ten (``bounds``).
        ///
        /// Lateness is measured with the time the loop last read before the callout (the end
        /// of its wait, or the end of the previous timer's callout), so it includes the wake-up
        /// and whatever the pass did before, and never a tolerance's worth of slack RunLoopKit
        /// did not use.
        public struct TimerLateness: Sendable, Hashable {
            /// The buckets' upper bounds: 10 µs, 100 µs, 1 ms and 10 ms. A fire is counted in
            /// the first bucket whose bound it is under, or in ``atLeast10Milliseconds``.
            public static let bounds: [Duration] = [
                .microseconds(10), .microseconds(100), .milliseconds(1), .milliseconds(10),
            ]

            /// The buckets, in increasing lateness.
            var table = CounterTable<5>()

            /// Fires less than 10 µs late.
            public var under10Microseconds: UInt64 {
                get { table[0] }
                set { table[0] = newValue }
            }
            /// Fires from 10 µs to less than 100 µs late.
            public var under100Microseconds: UInt64 {
                get { table[1] }
                set { table[1] = newValue }
            }
            /// Fires from 100 µs to less than 1 ms late.
            public var under1Millisecond: UInt64 {
                get { table[2] }
                set { table[2] = newValue }
            }
            /// Fires from 1 ms to less than 10 ms late.
            public var under10Milliseconds: UInt64 {
                get { table[3] }
                set { table[3] = newValue }
            }
            /// Fires 10 ms late or more.
            public var atLeast10Milliseconds: UInt64 {
                get { table[4] }
                set { table[4] = newValue }
            }

            /// Creates a histogram with every bucket at zero.
            public init() {}

            /// The buckets in increasing lateness: one more than ``bounds``.
            public var counts: [UInt64] { table.all }

            /// Every fire counted: the loop's timer fires.
            public var total: UInt64 { table.total }
        }
    }

    /// The loop's counters so far. Safe to call from any thread.
    public var statistics: Statistics {
        var snapshot = Statistics()
        let counters = instruments.counters
        snapshot.passes = counters.passes.load(ordering: .relaxed)
        counters.read(
            wakeups: &snapshot.wakeups.table, callouts: &snapshot.callouts.table,
            lateness: &snapshot.timerLateness.table)
        snapshot.timeAsleep = .nanoseconds(counters.asleep.load(ordering: .relaxed))
        snapshot.timeAwake = .nanoseconds(counters.awake.load(ordering: .relaxed))
        snapshot.descriptorEvents = counters.descriptorEvents.load(ordering: .relaxed)
        return snapshot
    }
}
