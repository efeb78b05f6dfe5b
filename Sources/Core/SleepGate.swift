import Synchronization

/// How a loop goes to sleep and how other threads wake it: the one place where the two sides
/// meet.
///
/// The loop publishes that it sleeps (``close(unless:)``) before its last look for work, and
/// a poster publishes its work before it looks whether the loop sleeps (``wake()``); both
/// sides use sequentially consistent operations with a fence between publishing and looking,
/// so either the loop sees the work or the poster sees the loop asleep and wakes it. Work
/// published under the loop's state lock is ordered by that lock as well, since the loop
/// decides to sleep under it.
///
/// A sleep is woken at most once: the first poster to see it claims the wake and pays for the
/// backend's waker; the others return at once.
final class SleepGate: Sendable {
    private let sleeping = Atomic<Bool>(false)
    private let wakePosted = Atomic<Bool>(false)
    private let waker: any BackendWaker

    init(waker: any BackendWaker) {
        self.waker = waker
    }

    // MARK: - Posters (any thread)

    /// Wakes the loop if it sleeps and no one has woken this sleep yet. Call after publishing
    /// the work the loop must see, with no lock held.
    func wake() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard sleeping.load(ordering: .sequentiallyConsistent) else { return }
        guard !wakePosted.exchange(true, ordering: .sequentiallyConsistent) else { return }
        waker.wake()
    }

    /// Whether the loop sleeps in its backend now.
    var isAsleep: Bool { sleeping.load(ordering: .sequentiallyConsistent) }

    // MARK: - The loop (its own thread)

    /// Publishes that the loop is going to sleep, then takes its last look for work: when
    /// `workFound` finds some, the loop stays awake. Returns whether it sleeps.
    func close(unless workFound: () -> Bool) -> Bool {
        wakePosted.store(false, ordering: .sequentiallyConsistent)
        sleeping.store(true, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard !workFound() else {
            sleeping.store(false, ordering: .sequentiallyConsistent)
            return false
        }
        return true
    }

    /// Whether a poster has woken the current sleep: a wait that returns with nothing to do
    /// and no wake was interrupted or received a late wake, and sleeps on.
    var wasWoken: Bool { wakePosted.load(ordering: .sequentiallyConsistent) }

    /// Ends the sleep; returns whether a poster woke it.
    func open() -> Bool {
        sleeping.store(false, ordering: .sequentiallyConsistent)
        return wakePosted.exchange(false, ordering: .sequentiallyConsistent)
    }
}
