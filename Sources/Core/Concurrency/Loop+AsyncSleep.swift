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

extension Loop {
    /// How many timers `mode` holds (not its queue's entries): for tests that a sleep's timer
    /// was armed or removed. Safe to call from any thread.
    package func timerCount(in mode: Mode) -> Int {
        state.withLock { $0.modes.read(mode) { $0.timers.count } ?? 0 }
    }
}
