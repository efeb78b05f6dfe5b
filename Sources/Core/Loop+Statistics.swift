import Synchronization

extension Loop {
    /// Cheap, always-on counters of what a loop has done, as a snapshot.
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

        /// Every wakeup, whatever its reason.
        public var wakeups: UInt64 {
            timerWakeups + sourceWakeups + mainQueueWakeups + wokenWakeups + timeoutWakeups + spuriousWakeups
        }

        /// A snapshot with every counter at zero.
        public init() {}
    }

    /// The loop's counters so far. Safe to call from any thread.
    public var statistics: Statistics {
        var snapshot = Statistics()
        snapshot.passes = counters.passes.load(ordering: .relaxed)
        snapshot.timerWakeups = counters.timer.load(ordering: .relaxed)
        snapshot.sourceWakeups = counters.source.load(ordering: .relaxed)
        snapshot.mainQueueWakeups = counters.mainQueue.load(ordering: .relaxed)
        snapshot.wokenWakeups = counters.woken.load(ordering: .relaxed)
        snapshot.timeoutWakeups = counters.timeout.load(ordering: .relaxed)
        snapshot.spuriousWakeups = counters.spurious.load(ordering: .relaxed)
        return snapshot
    }
}

/// Why a wait that slept ended, for ``Loop/Statistics``.
enum WakeupReason {
    case timer, source, mainQueue, woken, timeout, spurious
}

/// The counters behind ``Loop/Statistics``. Only the loop's thread writes them, so an
/// increment is a relaxed load and store, never a locked read-modify-write.
final class LoopCounters: Sendable {
    let passes = Atomic<UInt64>(0)
    let timer = Atomic<UInt64>(0)
    let source = Atomic<UInt64>(0)
    let mainQueue = Atomic<UInt64>(0)
    let woken = Atomic<UInt64>(0)
    let timeout = Atomic<UInt64>(0)
    let spurious = Atomic<UInt64>(0)

    func countPass() { bump(passes) }

    func count(_ reason: WakeupReason) {
        switch reason {
        case .timer: bump(timer)
        case .source: bump(source)
        case .mainQueue: bump(mainQueue)
        case .woken: bump(woken)
        case .timeout: bump(timeout)
        case .spurious: bump(spurious)
        }
    }

    private func bump(_ counter: borrowing Atomic<UInt64>) {
        counter.store(counter.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }
}
