import Synchronization

/// How a loop goes to sleep and how other threads wake it: the one place where the two sides
/// meet.
///
/// The loop publishes that it sleeps (``beginSleep(unless:)``) before its last look for work, and
/// a poster publishes its work before it looks whether the loop sleeps (``wake()``); both
/// sides use sequentially consistent operations with a fence between publishing and looking,
/// so either the loop sees the work or the poster sees the loop asleep and wakes it. Work
/// published under the loop's state lock is ordered by that lock as well, since the loop
/// decides to sleep under it.
///
/// A sleep is woken at most once: the first poster to see it claims the wake and pays for the
/// backend's waker; the others return at once. A claim is for the sleep the poster saw: each
/// sleep has a number, so a poster that saw one sleep and claims after it ended cannot claim
/// the next (it would wake that sleep for work the loop has already seen: an extra pass,
/// counted as woken). The number costs nothing extra: the claim was one atomic
/// read-modify-write and stays one (a compare-and-exchange instead of an exchange).
final class SleepGate: Sendable {
    /// Bit 0: the loop sleeps; bit 1: a poster claimed this sleep's wake; the rest: the sleep's
    /// number. Only the loop's thread changes the number and bit 0.
    private let word = Atomic<UInt64>(0)
    // Computed constants: a stored static is a lazily made global, looked up at each use.
    private static var asleep: UInt64 { 1 }
    private static var claimed: UInt64 { 2 }
    private static var nextSleep: UInt64 { 4 }
    /// The backend's waker: the one copy the loop keeps. Written by ``wake()``; also written
    /// directly where a wake must reach the backend whatever the sleep's state (a host's wait
    /// resumed after a nested run), and by tests that deliver a wake no one claimed.
    let waker: any BackendWaker

    #if DEBUG
    /// For tests, in debug builds only: called by ``wake()`` between seeing a sleep and
    /// claiming its wake, to hold a poster in that window.
    let afterSeeingSleep = Lock<(@Sendable () -> Void)?>(nil)
    #endif

    init(waker: any BackendWaker) {
        self.waker = waker
    }

    // MARK: - Posters (any thread)

    /// Wakes the loop if it sleeps and no one has woken this sleep yet. Call after publishing
    /// the work the loop must see, with no lock held.
    func wake() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        wake(seen: word.load(ordering: .sequentiallyConsistent))
    }

    /// The gate's word as a poster reads it while it holds the block queue's lock, right after
    /// queuing a block there; pass it to ``wake(seen:)`` once the lock is let go.
    ///
    /// No fence is needed: the loop takes that lock for its last look for blocks, after it
    /// published that it sleeps (``beginSleep(unless:)`` with
    /// ``BlockQueue/hasBlockForSleep(runningIn:commonModes:)``). Either the loop's look comes
    /// after this poster let the lock go, and it sees the block, or it came before this poster
    /// took the lock, and then so did the loop's `asleep`, which this read sees. (A fence and a
    /// sequentially consistent load cost a post more than the rest of the gate.)
    func seenUnderQueueLock() -> UInt64 { word.load(ordering: .relaxed) }

    /// Wakes the sleep `seen` (the gate's word as read after publishing work), unless it was
    /// not a sleep or another poster claimed its wake.
    func wake(seen: UInt64) {
        guard seen & (SleepGate.asleep | SleepGate.claimed) == SleepGate.asleep else { return }
        #if DEBUG
        if let hook = afterSeeingSleep.withLock({ $0 }) { hook() }
        #endif
        // Fails when another poster claimed this sleep, or when the sleep ended: the loop then
        // looks for work again before its next sleep, after this poster published its own.
        guard
            word.compareExchange(
                expected: seen, desired: seen | SleepGate.claimed, ordering: .sequentiallyConsistent
            ).exchanged
        else { return }
        waker.wake()
    }

    /// Whether the loop sleeps in its backend now.
    var isAsleep: Bool { word.load(ordering: .sequentiallyConsistent) & SleepGate.asleep != 0 }

    // MARK: - The loop (its own thread)

    /// Publishes that the loop is going to sleep, then takes its last look for work: when
    /// `workFound` finds some, the loop stays awake. Returns whether it sleeps.
    func beginSleep(unless workFound: () -> Bool) -> Bool {
        let number = (word.load(ordering: .relaxed) & ~(SleepGate.asleep | SleepGate.claimed)) &+ SleepGate.nextSleep
        word.store(number | SleepGate.asleep, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard !workFound() else {
            // A poster may have claimed this sleep meanwhile: its write reaches the waker
            // anyway, and the next sleep takes it for a late wake and sleeps on.
            word.store(number, ordering: .sequentiallyConsistent)
            return false
        }
        return true
    }

    /// Whether a poster has woken the current sleep: a wait that returns with nothing to do
    /// and no wake was interrupted or received a late wake, and sleeps on.
    var wasWoken: Bool { word.load(ordering: .sequentiallyConsistent) & SleepGate.claimed != 0 }

    /// Ends the sleep; returns whether a poster woke it.
    func endSleep() -> Bool {
        let word = word.load(ordering: .relaxed)
        let ended = word & ~(SleepGate.asleep | SleepGate.claimed)
        // An exchange: a poster's claim that lands between the load and this is still seen.
        return self.word.exchange(ended, ordering: .sequentiallyConsistent) & SleepGate.claimed != 0
    }
}
