extension Loop {
    /// Decides whether and until when `sleeper` sleeps in `mode` and, when it sleeps, publishes
    /// it through ``SleepGate``: the one decision for the loop's own wait and a host's
    /// (``Sleeper`` names where they differ, and why).
    ///
    /// [C2] Decided under the state lock, so work posted under that lock either is seen here or
    /// finds the loop asleep and wakes it; blocks, posted under their own lock, and threads
    /// waiting for the backend are looked for after the loop has published that it sleeps.
    func decideSleep(in mode: Mode, until runDeadline: Int64?, for sleeper: Sleeper) -> SleepPlan {
        let now = nowNanoseconds
        return state.withLock { state in
            // [R6, W3] This wait consumes every wakeUp posted before it.
            let woken = hints.consumeWake()
            // [W4] Sources added since the sync must be registered before sleeping: poll, and the
            // next pass syncs them. [W1] A stop of the run this wait is for is pending work.
            if woken || hints.haveDescriptorsChanged() || state.hasPendingWork(in: mode)
                || (!sleeper.sleepsInEmptyMode && isEmpty(mode, state))
            {
                return .poll
            }
            var plan = SleepPlan(deadline: runDeadline, sleeps: true, slack: nil)
            if let timer = state.modes.update(mode, { $0.timerDeadline() }) ?? nil {
                // The queue's deadline is already the latest instant that serves its timers
                // (their instants plus tolerance).
                let (wakeAt, slack) =
                    sleeper.narrowsTimerSlack
                    ? local.timerSlack.plan(deadline: timer.deadline, tolerance: timer.tolerance)
                    : (timer.deadline, nil)
                if runDeadline.map({ wakeAt <= $0 }) ?? true {
                    plan.deadline = wakeAt
                    plan.slack = slack
                    plan.tolerance = timer.tolerance
                }
            }
            // Within the clock's lag (tens of nanoseconds, LoopClock.continuous) a deadline counts as
            // reached: a timer re-armed to now, read from ContinuousClock, is served by polling
            // until the pass's clock sees it due, not by a wait that a backend rounds up to a
            // microsecond or a millisecond.
            if let deadline = plan.deadline, deadline <= now.addingSaturating(clock.lag) {
                return SleepPlan(deadline: deadline, sleeps: false, slack: nil)
            }
            // A block an enclosing drain took runs here now if the mode was made common since
            // this pass drained: that drain is over, and `addCommonMode` saw the loop awake.
            if !local.takenBlocks.isEmpty {
                let modeIsCommon = state.commonModes.contains(mode)
                if local.takenBlocks.contains(runningIn: mode, modeIsCommon: modeIsCommon) {
                    return .poll
                }
            }
            let commonModes = state.commonModes
            let sleeps = sleep.beginSleep {
                (sleeper.yieldsToBackendLockWaiters && registrar.hasWaiters)
                    || blocks.hasBlockForSleep(runningIn: mode, commonModes: commonModes)
            }
            guard sleeps else { return .poll }
            // What a timer added during the sleep is compared with: the latest the wait can
            // end, slack included, so that a timer due before then wakes the loop.
            state.sleepDeadline = plan.deadline.map { deadline in
                sleeper.narrowsTimerSlack
                    ? local.timerSlack.latestEnd(ofWaitUntil: deadline, slack: plan.slack) : deadline
            }
            // Blocks taken by an enclosing drain are this thread's: what `addCommonMode` must
            // know of them is published with the sleep (they cannot change while it lasts).
            state.sleepHoldsBlocksForCommonModes =
                local.takenBlocks.contains(runningIn: mode, modeIsCommon: true)
            return plan
        }
    }
}

extension Loop {
    /// Makes a sleeping loop return from its wait; the run goes on.
    ///
    /// Called while the loop runs but is busy, the next wait returns at once. No effect while
    /// the loop is not running. Safe to call from any thread.
    public func wakeUp() {
        let wake: Bool = state.withLock { state in
            // [W2] A host's wait is a run too: its descriptor must become readable.
            guard !state.runs.isEmpty else { return false }
            // Asleep: ending that sleep is the whole wake. Marking it as pending too would
            // make the next wait return at once as well: two passes for one wake. (The loop
            // decides to sleep under this lock, so it cannot fall asleep in between.)
            if sleep.isAsleep { return true }
            hints.requestWake()
            return false
        }
        if wake { sleep.wake() }
    }

    /// Ends the innermost active run after its current pass (its blocks still run).
    ///
    /// No effect while the loop is not running. Safe to call from any thread.
    public func stop() {
        let wake: Bool = state.withLock { state in
            // [W1] A host's wait is a run too: its dispatch returns `.stopped`, and a host asleep
            // on the descriptor wakes for it.
            guard !state.runs.isEmpty else { return false }
            state.runs[state.runs.count - 1].stopped = true
            hints.noteStopRequested()
            return true
        }
        if wake { sleep.wake() }
    }

    /// Ends every active run, the outermost included, after its current pass: a
    /// ``LoopThread`` ending its loop from a block that a nested run happens to drain.
    func stopAllRuns() {
        let wake: Bool = state.withLock { state in
            for index in state.runs.indices { state.runs[index].stopped = true }
            if !state.runs.isEmpty { hints.noteStopRequested() }
            return !state.runs.isEmpty
        }
        if wake { sleep.wake() }
    }
}
