import RunLoopKit

/// Makes `attempt` (a run of `loop` meant to sleep) again until the loop's statistics count a
/// wakeup for it, at most `limit` times; false when none slept.
///
/// A run whose deadline (a short timeout, a short timer) has passed by the time the loop gets
/// to its wait — its thread descheduled on a loaded machine, or slowed by a sanitizer — polls
/// instead of sleeping, and counts no wakeup (``Loop/Statistics``: a wakeup is the end of a
/// wait that slept). That attempt proves nothing and counts nothing, so the counts a test
/// expects stay exact.
@discardableResult
func repeatUntilSlept(_ loop: Loop, limit: Int = 20, _ attempt: () throws -> Void) rethrows -> Bool {
    for _ in 0..<limit {
        let wakeups = loop.statistics.wakeups.total
        try attempt()
        if loop.statistics.wakeups.total > wakeups { return true }
    }
    return false
}
