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
        /// Waits that slept and ended because a timer was due.
        public var timerWakeups: UInt64 = 0
        /// Waits that slept and ended because a version-1 source was ready.
        public var sourceWakeups: UInt64 = 0
        /// Waits that slept and ended because the dispatch main queue had work.
        public var mainQueueWakeups: UInt64 = 0
        /// Waits that slept and ended because another thread woke the loop.
        public var wokenWakeups: UInt64 = 0
        /// Waits that slept until the end they were planned with and found nothing to do: the
        /// run's timeout, or a timer invalidated or moved while the loop slept.
        public var timeoutWakeups: UInt64 = 0
        /// Waits that slept and ended early with no reason. Always zero unless something is
        /// wrong: a wait interrupted by a signal, or woken by a wake meant for an earlier
        /// sleep, goes back to sleep instead.
        public var spuriousWakeups: UInt64 = 0

        /// Time the loop's thread slept in its backend, waiting for work (polls excluded).
        /// Whole nanoseconds.
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

        /// Every wakeup, whatever its reason.
        public var wakeups: UInt64 {
            timerWakeups + sourceWakeups + mainQueueWakeups + wokenWakeups + timeoutWakeups + spuriousWakeups
        }

        /// Timers fired: the same as `callouts.timer`, and as `timerLateness.total`.
        public var timerFires: UInt64 { callouts.timer }

        /// Blocks run: the same as `callouts.block`.
        public var blocksRun: UInt64 { callouts.block }

        /// Creates a snapshot with every counter at zero.
        public init() {}

        /// Callouts made by a loop, by ``Loop/CalloutKind``.
        public struct Callouts: Sendable, Hashable {
            /// Observer handlers called.
            public var observer: UInt64 = 0
            /// Timer handlers called: one per fire.
            public var timer: UInt64 = 0
            /// Version-0 sources performed.
            public var version0Source: UInt64 = 0
            /// Descriptor-source handlers called.
            public var descriptorSource: UInt64 = 0
            /// Messages handed to port-source handlers (one call each).
            public var portMessage: UInt64 = 0
            /// Blocks run: those queued by ``Loop/perform(_:)`` and its variants, and the jobs of
            /// a loop used as an executor.
            public var block: UInt64 = 0
            /// Drains of the dispatch main queue (the main loop only); each runs the blocks
            /// queued on it before the drain.
            public var mainQueue: UInt64 = 0

            /// Creates counts at zero.
            public init() {}

            /// The count of `kind`.
            public subscript(kind: CalloutKind) -> UInt64 {
                get {
                    switch kind {
                    case .observer: observer
                    case .timer: timer
                    case .version0Source: version0Source
                    case .descriptorSource: descriptorSource
                    case .portMessage: portMessage
                    case .block: block
                    case .mainQueue: mainQueue
                    }
                }
                set {
                    switch kind {
                    case .observer: observer = newValue
                    case .timer: timer = newValue
                    case .version0Source: version0Source = newValue
                    case .descriptorSource: descriptorSource = newValue
                    case .portMessage: portMessage = newValue
                    case .block: block = newValue
                    case .mainQueue: mainQueue = newValue
                    }
                }
            }

            /// Every callout, whatever its kind.
            public var total: UInt64 { CalloutKind.allCases.reduce(0) { $0 + self[$1] } }
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

            /// Fires less than 10 µs late.
            public var under10Microseconds: UInt64 = 0
            /// Fires from 10 µs to less than 100 µs late.
            public var under100Microseconds: UInt64 = 0
            /// Fires from 100 µs to less than 1 ms late.
            public var under1Millisecond: UInt64 = 0
            /// Fires from 1 ms to less than 10 ms late.
            public var under10Milliseconds: UInt64 = 0
            /// Fires 10 ms late or more.
            public var atLeast10Milliseconds: UInt64 = 0

            /// Creates a histogram with every bucket at zero.
            public init() {}

            /// The buckets in increasing lateness: one more than ``bounds``.
            public var counts: [UInt64] {
                [
                    under10Microseconds, under100Microseconds, under1Millisecond, under10Milliseconds,
                    atLeast10Milliseconds,
                ]
            }

            /// Every fire counted: the loop's timer fires.
            public var total: UInt64 { counts.reduce(0, +) }
        }
    }

    /// The loop's counters so far. Safe to call from any thread.
    public var statistics: Statistics {
        var snapshot = Statistics()
        let counters = instruments.counters
        snapshot.passes = counters.passes.load(ordering: .relaxed)
        snapshot.timerWakeups = counters.wakeups(.timer)
        snapshot.sourceWakeups = counters.wakeups(.source)
        snapshot.mainQueueWakeups = counters.wakeups(.mainQueue)
        snapshot.wokenWakeups = counters.wakeups(.woken)
        snapshot.timeoutWakeups = counters.wakeups(.timeout)
        snapshot.spuriousWakeups = counters.wakeups(.spurious)
        snapshot.timeAsleep = .nanoseconds(counters.asleep.load(ordering: .relaxed))
        snapshot.timeAwake = .nanoseconds(counters.awake.load(ordering: .relaxed))
        snapshot.callouts.observer = counters.observerCallouts.load(ordering: .relaxed)
        snapshot.callouts.timer = counters.timerCallouts.load(ordering: .relaxed)
        snapshot.callouts.version0Source = counters.version0Callouts.load(ordering: .relaxed)
        snapshot.callouts.descriptorSource = counters.descriptorCallouts.load(ordering: .relaxed)
        snapshot.callouts.portMessage = counters.portMessages.load(ordering: .relaxed)
        snapshot.callouts.block = counters.blockCallouts.load(ordering: .relaxed)
        snapshot.callouts.mainQueue = counters.mainQueueDrains.load(ordering: .relaxed)
        snapshot.timerLateness.under10Microseconds = counters.lateUnder10Microseconds.load(ordering: .relaxed)
        snapshot.timerLateness.under100Microseconds = counters.lateUnder100Microseconds.load(ordering: .relaxed)
        snapshot.timerLateness.under1Millisecond = counters.lateUnder1Millisecond.load(ordering: .relaxed)
        snapshot.timerLateness.under10Milliseconds = counters.lateUnder10Milliseconds.load(ordering: .relaxed)
        snapshot.timerLateness.atLeast10Milliseconds = counters.lateAtLeast10Milliseconds.load(ordering: .relaxed)
        snapshot.descriptorEvents = counters.descriptorEvents.load(ordering: .relaxed)
        return snapshot
    }
}
