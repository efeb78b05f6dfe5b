extension Loop {
    /// Suspends the calling task until `duration` has passed, on a one-shot timer of this loop
    /// with `tolerance`, so that the wakeup coalesces with the loop's other timers.
    ///
    /// The timer is in the loop's common modes and keeps them alive while it waits; the task
    /// resumes on its own executor once the timer has fired on the loop's thread. It works
    /// from any task, on any executor: the loop only times the sleep.
    ///
    /// - Parameters:
    ///   - duration: how long to sleep at least; zero or negative means the loop's next pass.
    ///   - tolerance: how late the timer may fire so the loop can coalesce wakeups; not
    ///     negative.
    /// - Throws: `CancellationError` at once when the task is cancelled before the timer fires
    ///   (the timer is removed from the loop); ``LoopEndedError`` when the loop ends (its
    ///   thread exits) before the timer fires, or had ended already; ``ArgumentError`` naming
    ///   `tolerance` when it is negative. It never waits for a loop that will not run again.
    public func sleep(for duration: Duration, tolerance: Duration = .zero) async throws {
        try Timer.validate(tolerance: tolerance)
        let sleep = PendingSleep()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                sleep.start(continuation, on: self, fireAt: now + max(duration, .zero), tolerance: tolerance)
            }
        } onCancel: {
            sleep.cancel()
        }
    }
}

/// The error of a wait on a loop that ended first: its thread exited (and the loop was torn
/// down) before what was awaited happened.
public struct LoopEndedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The loop, as its `description` read (`Loop(epoll)`).
    public let loop: String

    /// What the error says: which loop ended.
    public var description: String { "\(loop) ended (its thread exited) before the wait was over" }
}

/// One `Loop.sleep(for:tolerance:)`: the task's side (cancellation) of a sleep whose timer
/// holds the waiter. It holds the timer and the waiter weakly: the loop alone keeps them, so
/// that a loop torn down with the timer still queued frees the waiter, which then answers.
private final class PendingSleep: Sendable {
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

/// The continuation of a sleep, resumed once: by the timer, by cancellation, or, when the loop
/// drops the timer unfired (torn down), by its own `deinit` with ``LoopEndedError``.
private final class SleepWaiter: Sendable {
    private let continuation: Lock<CheckedContinuation<Void, any Error>?>
    private let loop: String

    init(_ continuation: CheckedContinuation<Void, any Error>, loop: Loop) {
        self.continuation = Lock(continuation)
        self.loop = loop.description
    }

    func resume(with result: Result<Void, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }

    deinit {
        continuation.withLock { $0.take() }?.resume(throwing: LoopEndedError(loop: loop))
    }
}

extension Loop {
    /// How many timers `mode` holds (not its queue's entries): for tests that a sleep's timer
    /// was armed or removed. Safe to call from any thread.
    package func timerCount(in mode: Mode) -> Int {
        state.withLock { $0.modes.read(mode) { $0.timers.count } ?? 0 }
    }
}
