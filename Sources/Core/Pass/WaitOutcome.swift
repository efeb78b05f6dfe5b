/// How a pass's wait went, for the statistics.
enum WaitOutcome {
    /// The wait did not sleep (a poll).
    case polled
    /// The wait slept; `woken`: another thread woke it for this sleep; `reachedDeadline`:
    /// it ran to the end it was planned with (a timer or the run's timeout).
    case slept(woken: Bool, reachedDeadline: Bool)
}

extension WaitOutcome {
    /// Why a wait that slept ended, from what the pass found after it (see ``WakeupReason``);
    /// `nil` for a poll, which did not sleep.
    func wakeupReason(firedTimers: Bool, handledSources: Bool, drainedMainQueue: Bool) -> Loop.WakeupReason? {
        guard case let .slept(woken, reachedDeadline) = self else { return nil }
        return Loop.WakeupReason(
            firedTimers: firedTimers, handledSources: handledSources, drainedMainQueue: drainedMainQueue,
            woken: woken, reachedDeadline: reachedDeadline)
    }
}
