extension Loop {
    /// One pass of a run, phase by phase in the contract's order (<doc:PassOrder>); returns
    /// the result when the run ends.
    ///
    /// Each phase is a function of its own; what a pass tells the statistics and stall
    /// monitors is recorded at the phases' boundaries (``PassInstruments``), and what it may
    /// skip without the lock is read from ``PassHints``.
    func pass(_ run: inout RunContext) -> RunResult? {
        let mode = run.mode
        // [R3] Before timers and sources; the mode's blocks.
        notifyObservers(.beforeTimers, in: mode)
        notifyObservers(.beforeSources, in: mode)
        drainBlocks(in: mode)
        // [R4] The signalled version-0 sources; after one, the blocks again, and no sleep.
        var polls = run.isPoll
        if performSignalledSources(in: mode, onlyFirst: run.returnAfterSourceHandled) {
            run.handledSource = true
            drainBlocks(in: mode)
            polls = true
        }
        // [R5] A mode emptied meanwhile does not wait: straight to the decision.
        var wakeupReason: WakeupReason?
        if polls || !modeIsEmpty(mode) {
            // [R6] The wait, between the beforeWaiting and afterWaiting observers when it may
            // sleep.
            if !polls { notifyObservers(.beforeWaiting, in: mode) }
            let wait = waitForWork(in: mode, polls: polls, drainsBackend: run.drainsBackend, until: run.deadline)
            if !polls { notifyObservers(.afterWaiting, in: mode) }
            if case .polled = wait { instruments.polled() }
            // [R7] Everything ready when the wait ended: due timers, ready version-1 sources,
            // the dispatch main queue [Q1], then the backend's own sources [G1].
            let firedTimers = fireDueTimers(in: mode)
            let (handledSources, mainQueueReady) = handleReadySources(in: mode)
            let drainedMainQueue = mainQueueReady && drainMainQueue()
            let dispatchedBackendSources = ownSourcesInPassPhase && dispatchBackendSources()
            if handledSources || drainedMainQueue || dispatchedBackendSources { run.handledSource = true }
            wakeupReason = wait.wakeupReason(
                firedTimers: firedTimers, handledSources: handledSources || dispatchedBackendSources,
                drainedMainQueue: drainedMainQueue)
        }
        instruments.endPass(wakeupReason)
        // [R8] The blocks once more.
        drainBlocks(in: mode)
        // [R9]
        return decide(run)
    }

    /// [R9] The end-of-pass decision, in the contract's precedence.
    private func decide(_ run: RunContext) -> RunResult? {
        // 1. Returning after a handled source, handled by this run itself.
        if run.returnAfterSourceHandled, run.handledSource { return .handledSource }
        // 2. The run's timeout has passed; a poll's always has [R11].
        if run.isPoll { return .timedOut }
        if let deadline = run.deadline, nowNanoseconds >= deadline { return .timedOut }
        // 3. Stopped [W1]; 4. the mode is empty.
        return state.withLock { state in
            if state.runs.last!.stopped { return .stopped }
            if isEmpty(run.mode, state) { return .finished }
            return nil
        }
    }

    /// Whether `mode` has nothing to serve (R5), under the state lock.
    private func modeIsEmpty(_ mode: Mode) -> Bool {
        state.withLock { isEmpty(mode, $0) }
    }

    /// Whether `mode` has nothing to serve: no source, no timer, no block queued or taken by
    /// a drain this run is nested in. On the loop's thread, with the state lock held.
    func isEmpty(_ mode: Mode, _ state: borrowing LoopState) -> Bool {
        guard hasNothingQueued(in: mode, state) else { return false }
        guard !local.takenBlocks.isEmpty else { return true }
        let modeIsCommon = state.commonModes.contains(mode)
        return !local.takenBlocks.contains(runningIn: mode, modeIsCommon: modeIsCommon)
    }
}
