extension Loop {
    /// [R6] Waits in the backend for the mode's ports, its next timer, the run's deadline or a
    /// wake.
    func waitForWork(
        in mode: Mode, polls: Bool, drainsBackend: Bool, until runDeadline: ContinuousClock.Instant?
    ) -> WaitOutcome {
        publish(.beforeWaiting)
        syncDescriptors(for: mode)
        if polls {
            // [R6, R11] A poll is a wait that returns at once: it consumes a pending wakeUp.
            hints.consumeWakeByPolling()
            // With no descriptor to ask about, the kernel has nothing to tell a poll.
            // A backend whose own sources are a pass phase, or a wake a host loop saw on the
            // backend's descriptor, has something to tell all the same.
            if registrar.watchesNothing, !ownSourcesInPassPhase, !drainsBackend {
                return .polled
            }
        }
        return registrar.withBackend { backend in
            let plan = polls ? .poll : decideSleep(in: mode, until: runDeadline, for: .loop)
            if plan.sleeps { local.timerSlack.apply(plan.slack) }
            return wait(in: backend, as: plan)
        } ?? .polled
    }

    /// Registers the descriptors of `mode`'s version-1 sources (and, on the main loop, the
    /// dispatch main queue's) in the backend, when they changed since the last pass.
    func syncDescriptors(for mode: Mode) {
        let mainQueue = isMain && state.withLock { $0.watchesMainQueue(in: mode) } ? local.mainQueuePort : nil
        invalidateUnwatchable(registrar.sync(mode, mainQueue: mainQueue, of: self))
    }

    /// Decides whether and until when `sleeper` sleeps in `mode` and, when it sleeps, publishes
    /// it through ``SleepGate``: the one decision for the loop's own wait and a host's
    /// (``Sleeper`` names where they differ, and why).
    ///
    /// [C2] Decided under the state lock, so work posted under that lock either is seen here or
    /// finds the loop asleep and wakes it; blocks, posted under their own lock, and threads
    /// waiting for the backend are looked for after the loop has published that it sleeps.
    func decideSleep(in mode: Mode, until runDeadline: ContinuousClock.Instant?, for sleeper: Sleeper) -> SleepPlan {
        let now = self.now
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
                    ? local.timerSlack.plan(deadline: timer.instant, tolerance: timer.tolerance) : (timer.instant, nil)
                if runDeadline.map({ wakeAt <= $0 }) ?? true {
                    plan.deadline = wakeAt
                    plan.slack = slack
                    plan.tolerance = timer.tolerance
                }
            }
            if let deadline = plan.deadline, deadline <= now {
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

    /// Waits as `plan` says. A wait that returns with nothing to do before its deadline (a
    /// signal interrupted it, or a wake posted for an earlier sleep arrived late) waits
    /// again for what is left: every wait that ends has a reason [C3].
    ///
    /// The timer slack narrowed for this wait stays narrowed after it (callouts run with it):
    /// putting it back would cost a system call between a timer's wake and its callout, and
    /// another before the next exact wait. A wait that needs the thread's own slack restores
    /// it, and so does the end of the outermost run.
    func wait(in backend: any Backend, as plan: SleepPlan) -> WaitOutcome {
        // A sleep ends the loop's stretch of work and is counted: these two times bound it.
        let sleptAt: Int64? = plan.sleeps ? instruments.fallAsleep() : nil
        while true {
            let timeout = plan.sleeps ? plan.deadline.map { max(.zero, $0 - now) } : .zero
            do {
                try backend.wait(timeout: timeout, into: &local.events)
            } catch {
                // Interrupts, old kernels and sandboxes are handled by the backends; what is
                // left is a broken invariant (a closed epoll descriptor, say).
                trap("RunLoopKit: \(backend.kind) wait failed: \(error)")
            }
            guard plan.sleeps, local.events.isEmpty, !sleep.wasWoken else { break }
            // The backend's own sources (GLib's) became ready: the pass dispatches them.
            if ownSourcesInPassPhase, case let .passPhase(phase) = backend.ownSources, phase.hasOwnSourcesReady {
                break
            }
            if let deadline = plan.deadline, now >= deadline { break }
        }
        guard let sleptAt else { return .polled }
        // `sleepDeadline` is left as it is: it only matters while the loop sleeps, and the
        // next decision to sleep sets it again.
        let woken = sleep.endSleep()
        instruments.accountWake(sleptAt: sleptAt)
        return .slept(woken: woken, reachedDeadline: plan.deadline.map { now >= $0 } ?? false)
    }
}
