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
        try await sleep(until: nil, orFor: duration, tolerance: tolerance)
    }

    /// ``sleep(for:tolerance:)`` until `instant` on the loop's clock (an instant already past
    /// means the loop's next pass): for RunLoopKitTesting's virtual clock, whose deadline must
    /// not move with an advance made between reading the time and arming the timer.
    package func sleep(until instant: ContinuousClock.Instant, tolerance: Duration) async throws {
        try await sleep(until: instant, orFor: .zero, tolerance: tolerance)
    }

    /// Sleeps until `instant`, or for `duration` from the time read as the timer is armed.
    private func sleep(
        until instant: ContinuousClock.Instant?, orFor duration: Duration, tolerance: Duration
    )
        async throws
    {
        try Timer.validate(tolerance: tolerance)
        let sleep = PendingSleep()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let fireAt = instant ?? now + max(duration, .zero)
                sleep.start(continuation, on: self, fireAt: fireAt, tolerance: tolerance)
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
