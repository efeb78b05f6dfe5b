import Synchronization

/// Whether the loop sleeps, and whether a wake was already sent for this sleep: atomics, so a
/// block poster can decide to wake without the loop's state lock.
///
/// The loop publishes `sleeping` before its last look at the queues, and a poster publishes its
/// work before reading `sleeping` (both sequentially consistent, with a fence on the block
/// path), so either the loop sees the work or the poster sees the loop asleep and wakes it.
final class SleepFlags: Sendable {
    let sleeping = Atomic<Bool>(false)
    let wakePosted = Atomic<Bool>(false)

    /// True when the caller must call the waker: the loop sleeps and no wake was sent yet.
    func claimWake() -> Bool {
        guard sleeping.load(ordering: .sequentiallyConsistent) else { return false }
        return !wakePosted.exchange(true, ordering: .sequentiallyConsistent)
    }
}
