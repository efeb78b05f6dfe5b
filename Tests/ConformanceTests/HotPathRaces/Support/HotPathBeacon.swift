import Dispatch
import Synchronization
import TestSupport

/// Lets one thread wait, without spinning, for a condition other threads make true and then
/// announce with ``ping()``. Conditions read sequentially consistent atomics (``AtomicInt``):
/// either the waiter sees the change, or the pinger sees it waiting and wakes it.
final class HotPathBeacon: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let waiting = Atomic<Bool>(false)

    /// Call after a change a waiter may be waiting for; from any thread.
    func ping() {
        if waiting.load(ordering: .sequentiallyConsistent) { semaphore.signal() }
    }

    /// Waits until `condition` holds; false if it still does not after `timeout`. One waiter
    /// at a time. With `spinning`, looks that many times before it blocks: a waiter that
    /// sees the change within a few microseconds acts while the loop is still on its way back
    /// to sleep, where the race windows are (blocking and being woken takes longer than that).
    func wait(within timeout: Duration = generousDeadline, spinning: Int = 0, until condition: () -> Bool) -> Bool {
        for _ in 0..<spinning where condition() { return true }
        if condition() { return true }
        waiting.store(true, ordering: .sequentiallyConsistent)
        defer { waiting.store(false, ordering: .sequentiallyConsistent) }
        let deadline = DispatchTime.now() + .nanoseconds(Int(timeout.nanosecondsRoundedUp))
        while !condition() {
            // Leftover signals from pings nobody waited for only cost a look.
            if semaphore.wait(timeout: deadline) == .timedOut { return condition() }
        }
        return true
    }
}
