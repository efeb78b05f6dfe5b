import Synchronization

/// A lower bound of the instant of every timer queued in a loop, on ``QueueTime``'s scale:
/// what lets a pass with no timer due (most passes) skip the timer step without taking the
/// loop's lock.
///
/// Lowered whenever a timer is queued and set again from the queues whenever a timer step
/// ends or finds nothing due, always under the loop's lock; read by the loop's thread without
/// it. A stale entry only keeps the bound low (the step then takes the lock and finds
/// nothing, as it did before this bound existed): never a missed timer. A timer queued by
/// another thread while the loop is busy may be seen a pass later; one queued while it sleeps
/// reaches it through the wake, after which it reads the bound under the lock's ordering.
final class TimerBound: Sendable {
    private let nanoseconds = Atomic<Int64>(.max)

    /// Lowers the bound to `instant`, a timer just queued. Loop's lock held.
    func lower(to instant: ContinuousClock.Instant) {
        let value = QueueTime.nanosecondsRoundedDown(instant)
        if value < nanoseconds.load(ordering: .relaxed) { nanoseconds.store(value, ordering: .releasing) }
    }

    /// Sets the bound from the queues. Loop's lock held.
    func set(_ value: Int64) {
        nanoseconds.store(value, ordering: .releasing)
    }

    /// Whether a timer may be due by `limit`.
    func mayBeDue(by limit: ContinuousClock.Instant) -> Bool {
        nanoseconds.load(ordering: .acquiring) <= QueueTime.nanosecondsRoundedDown(limit)
    }
}
