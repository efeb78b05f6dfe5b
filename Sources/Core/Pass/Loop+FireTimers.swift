extension Loop {
    /// [R7] Fires the timers of `mode` due now, in instant order, then order, then age (T11).
    ///
    /// Popped one at a time, so a run nested in a callback can fire the remaining ones. A
    /// timer re-armed or added while these callbacks run fires in a later pass (see
    /// ``TimerQueue``), even when it is already due.
    /// - Returns: whether any timer fired.
    func fireDueTimers(in mode: Mode) -> Bool {
        // No timer queued in any mode: not even the clock is read.
        guard hints.mayAnyTimerBeQueued() else { return false }
        let limit = nowNanoseconds
        // Nothing due (the common case of a pass woken for something else): no lock when no
        // timer of any mode can be due yet, one look otherwise.
        guard hints.mayTimerBeDue(by: limit) else { return false }
        let step: UInt64? = state.withLock { state in
            let step = state.modes.update(mode) { $0.beginTimerStep(dueBy: limit) } ?? nil
            if step == nil { hints.setTimerBound(state.modes.timerLowerBound) }
            return step
        }
        guard let step else { return false }
        publish(.timers)
        var fired = false
        // The time last read, for each timer's lateness: no clock read of its own.
        var calledAt = limit
        while let (timer, generation, entryInstant) = state.withLock({ state in
            state.modes.update(mode) { $0.popDueTimer(notAfter: limit, step: step) } ?? nil
        }) {
            if let returnedAt = fire(timer, armedAs: generation, entryInstant: entryInstant, calledAt: calledAt) {
                fired = true
                calledAt = returnedAt
            }
        }
        state.withLock { state in
            _ = state.modes.update(mode) { $0.timerQueue.endStep() }
            hints.setTimerBound(state.modes.timerLowerBound)
        }
        return fired
    }

    /// Fires `timer` if it is still armed as `generation`, whose queue entry's instant is
    /// `entryInstant`; `calledAt` is about when its callback begins (for the lateness
    /// statistics). Both in nanoseconds on ``QueueTime``'s scale.
    /// - Returns: when the callback returned, or `nil` when it did not run.
    private func fire(_ timer: Timer, armedAs generation: UInt64, entryInstant: Int64, calledAt: Int64) -> Int64? {
        let served: ContinuousClock.Instant? = timer.state.withLock { state in
            guard timer.isValid, !state.isFiring, timer.generation.load(ordering: .acquiring) == generation else {
                return nil
            }
            state.isFiring = true
            state.instantSetWhileFiring = nil
            // [N2] Every queued entry of this timer, in every mode, is now stale: nested runs skip it.
            timer.generation.add(1, ordering: .acquiringAndReleasing)
            return state.fireInstant
        }
        guard let served else { return nil }
        // [T2] A one-shot timer is invalidated before its callout, as CFRunLoop does.
        if timer.interval == nil { timer.invalidate() }
        // The entry's instant is the served instant, rounded up to the nanosecond.
        instruments.counters.countTimerFire(latenessNanoseconds: calledAt.subtractingSaturating(entryInstant))
        callingOutToTimer(timer)
        let returnedAt = nowNanoseconds
        // The new instant goes out of the lock on the queues' scale: a tuple holding an instant
        // (a resilient type) would be copied and destroyed through value witnesses.
        let rearm: (instant: Int64, tolerance: Int64, generation: UInt64)? = timer.state.withLock { state in
            state.isFiring = false
            guard timer.isValid, let interval = timer.interval else { return nil }
            // A repeating timer's grid is kept in instants, exactly: only it reads the clock so.
            let now = self.now
            var next = served.nextOnGrid(every: interval, after: now)
            // [T6] An instant set while the callback ran replaces the advance, sooner or later;
            // a past one means now (T1, T5), so the timer fires again in the next pass (it was
            // handled in this pass's timer step, which serves it no more).
            if let requested = state.instantSetWhileFiring { next = max(requested, now) }
            state.fireInstant = next
            return (
                QueueTime.nanosecondsRoundedUp(next), state.tolerance.nanosecondsRoundedUp,
                timer.generation.add(1, ordering: .acquiringAndReleasing).newValue
            )
        }
        if let rearm {
            requeue(timer, atNanoseconds: rearm.instant, tolerance: rearm.tolerance, generation: rearm.generation)
        }
        return returnedAt
    }
}
