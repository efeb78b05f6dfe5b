/// One `Loop.sleep(for:tolerance:)`: the task's side (cancellation) of a sleep whose timer
/// holds the waiter. It holds the timer and the waiter weakly: the loop alone keeps them, so
/// that a loop torn down with the timer still queued frees the waiter, which then answers.
final class PendingSleep: Sendable {
    private struct State {
        var cancelled = false
        weak var timer: Loop.Timer?
        weak var waiter: SleepWaiter?
    }

    // Lock, not Synchronization's Mutex: the Thread Sanitizer does not see Mutex's futex as
    // synchronization, and reports the accesses it orders as races.
    private let state = Lock(State())

    /// Arms the timer, unless the task was cancelled first (then the sleep throws at once).
    func start(
        _ continuation: CheckedContinuation<Void, any Error>, on loop: Loop, fireAt: ContinuousClock.Instant,
        tolerance: Duration
    ) {
        let waiter = SleepWaiter(continuation, loop: loop)
        // A non-negative tolerance and no interval: this cannot throw.
        let timer = try! Loop.Timer(fireAt: fireAt, tolerance: tolerance) { _ in waiter.resume(with: .success(())) }
        let cancelled = state.withLock { state in
            if !state.cancelled { (state.timer, state.waiter) = (timer, waiter) }
            return state.cancelled
        }
        if cancelled {
            waiter.resume(with: .failure(CancellationError()))
            return
        }
        // Not added to a loop already torn down: the timer and the waiter are freed on return,
        // and the waiter answers then.
        loop.add(timer, to: .common)
    }

    /// Removes the timer and ends the sleep with `CancellationError`, unless it ended first.
    func cancel() {
        let (timer, waiter) = state.withLock { state in
            state.cancelled = true
            return (state.timer, state.waiter)
        }
        timer?.invalidate()
        waiter?.resume(with: .failure(CancellationError()))
    }
}
