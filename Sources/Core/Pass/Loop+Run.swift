import Synchronization

/// The state of one `run` call.
private struct RunContext {
    let mode: Loop.Mode
    /// `nil` runs until stopped or finished.
    let deadline: ContinuousClock.Instant?
    /// A zero or negative timeout: one pass that never sleeps.
    let isPoll: Bool
    let returnAfterSourceHandled: Bool
    /// Every wait of this run reaches the backend, even a poll with no descriptor registered:
    /// a host loop woke for the backend's descriptor, whose pending wake must be consumed.
    let drainsBackend: Bool
    /// A source was handled by this run itself (not by a run nested in it).
    var handledSource = false
}

private let commonRunReported = Atomic<Bool>(false)

extension Loop {
    /// Runs the loop in `mode` until it is stopped, times out, runs out of work, or (if asked)
    /// has handled a source.
    ///
    /// Runs nest: a callout may run the loop again, in any mode. Must be called on the loop's
    /// own thread; calling it elsewhere traps with a message.
    ///
    /// - Parameters:
    ///   - mode: the mode to run. Running ``Mode/common`` is a usage error: it returns
    ///     ``RunResult/finished`` at once and is reported once per process through ``logger``
    ///     (by default a line on standard error).
    ///   - timeout: how long to run at most; `nil` runs without limit, zero or negative polls
    ///     once without sleeping.
    ///   - returnAfterSourceHandled: return ``RunResult/handledSource`` after the first pass
    ///     that handled a source.
    /// - Returns: why the run ended.
    @discardableResult
    public func run(
        _ mode: Mode = .default, timeout: Duration? = nil, returnAfterSourceHandled: Bool = false
    ) -> RunResult {
        precondition(
            isOnOwnThread,
            "Loop.run(_:timeout:returnAfterSourceHandled:) called on a thread that is not \(self)'s own; a loop runs only on its own thread"
        )
        return run(mode, timeout: timeout, returnAfterSourceHandled: returnAfterSourceHandled, drainsBackend: false)
    }

    /// ``run(_:timeout:returnAfterSourceHandled:)`` on the loop's own thread; `drainsBackend`
    /// makes every wait reach the backend (see ``RunContext/drainsBackend``).
    func run(
        _ mode: Mode, timeout: Duration?, returnAfterSourceHandled: Bool, drainsBackend: Bool
    ) -> RunResult {
        if mode == .common {
            // M6: reported once per process, through Loop.logger.
            if !commonRunReported.exchange(true, ordering: .relaxed) { reportCommonModeRun() }
            return .finished
        }
        bindMainQueueIfMain()
        let (entered, outermost): (Bool, Bool) = state.withLock { state in
            guard !state.isTornDown, state.modes.contains(mode), !isEmpty(mode, state) else { return (false, false) }
            state.runs.append(RunRecord(mode: mode))
            // A run starts with no wake pending. Cleared under the lock that `wakeUp()`
            // decides under: a wake posted once this run is recorded is this run's, and kept.
            wakeRequested.store(false, ordering: .relaxed)
            return (true, state.runs.count == 1)
        }
        guard entered else { return .finished }
        // H1: a run nested between a host's prepare and dispatch waits by itself meanwhile.
        let suspendedHostWait = suspendHostWaitForRun()
        defer { if suspendedHostWait { resumeHostWaitAfterRun() } }

        let enteredAt = Nanoseconds.now()
        if outermost { local.awakeSince = enteredAt }
        // Where the enclosing run is (in a callout, for a nested run; idle for the outermost):
        // it goes on there, in a stretch of its own, when this run returns.
        let enclosingPlace = local.progressPlace
        beginStretch(at: enteredAt, place: Loop.place(.entry))
        let isPoll = timeout.map { $0 <= .zero } ?? false
        var run = RunContext(
            mode: mode,
            // A poll never sleeps, so it needs no deadline (nor the clock read to make one).
            deadline: isPoll ? nil : timeout.map { now.advanced(bySaturating: $0) },
            isPoll: isPoll,
            returnAfterSourceHandled: returnAfterSourceHandled,
            drainsBackend: drainsBackend
        )
        notifyObservers(.entry, in: mode)
        var result: RunResult? = state.withLock { $0.runs.last!.stopped } ? .stopped : nil
        while result == nil {
            result = pass(&run)
        }
        notifyObservers(.exit, in: mode)
        state.withLock { state in
            state.runs.removeLast()
            // A wake still pending dies with the run that it was for; under the lock, so that
            // a wake posted after this, for the enclosing run, is kept.
            wakeRequested.store(false, ordering: .relaxed)
        }
        let exitedAt = Nanoseconds.now()
        if outermost, let awakeSince = local.awakeSince {
            counters.add(from: awakeSince, to: exitedAt, asleep: false)
            local.awakeSince = nil
        }
        beginStretch(at: exitedAt, place: enclosingPlace)
        // The observers kept for notifications would keep them (and whatever their callbacks
        // hold) alive after they left the loop: kept only while the loop runs.
        if outermost {
            local.observers = .empty
            // The thread goes back to its own timer slack once no run of the loop is active:
            // what it does next is not the loop's business.
            local.timerSlack.restore()
        }
        return result!
    }

    /// One pass of a run, in the contract's order; returns the result when the run ends.
    private func pass(_ run: inout RunContext) -> RunResult? {
        let mode = run.mode
        notifyObservers(.beforeTimers, in: mode)
        notifyObservers(.beforeSources, in: mode)
        drainBlocks(in: mode)
        var polls = run.isPoll
        if performSignalledSources(in: mode, onlyFirst: run.returnAfterSourceHandled) {
            run.handledSource = true
            drainBlocks(in: mode)
            polls = true
        }
        if polls || !modeIsEmpty(mode) {
            if !polls { notifyObservers(.beforeWaiting, in: mode) }
            let wait = waitForWork(in: mode, polls: polls, drainsBackend: run.drainsBackend, until: run.deadline)
            if !polls { notifyObservers(.afterWaiting, in: mode) }
            // A poll ends a stretch of work as a sleep does (a sleep began the next one as it
            // woke): one stretch is at most one pass's work.
            if case .polled = wait { beginStretch(place: Loop.place(.afterWaiting)) }
            let firedTimers = fireDueTimers(in: mode, dueBy: now)
            let (handledSources, mainQueueReady) = handleReadySources(in: mode)
            let drainedMainQueue = mainQueueReady && drainMainQueue()
            let dispatchedBackendSources = backendServesOwnSources && dispatchBackendSources()
            if handledSources || drainedMainQueue || dispatchedBackendSources { run.handledSource = true }
            if case let .slept(woken, reachedDeadline) = wait {
                counters.count(
                    WakeupReason(
                        firedTimers: firedTimers, handledSources: handledSources || dispatchedBackendSources,
                        drainedMainQueue: drainedMainQueue, woken: woken, reachedDeadline: reachedDeadline))
            }
        }
        counters.countPass()
        drainBlocks(in: mode)
        return decide(run)
    }

    /// The end-of-pass decision, in the contract's precedence.
    private func decide(_ run: RunContext) -> RunResult? {
        if run.returnAfterSourceHandled, run.handledSource { return .handledSource }
        // A host's dispatch is a poll that says `.stopped` when stopped (see dispatchForHost()):
        // the host has no other way to learn it.
        if run.isPoll {
            guard run.drainsBackend, state.withLock({ $0.runs.last!.stopped }) else { return .timedOut }
            return .stopped
        }
        if let deadline = run.deadline, now >= deadline { return .timedOut }
        return state.withLock { state in
            if state.runs.last!.stopped { return .stopped }
            if isEmpty(run.mode, state) { return .finished }
            return nil
        }
    }

    private func modeIsEmpty(_ mode: Mode) -> Bool {
        state.withLock { isEmpty(mode, $0) }
    }

    // MARK: - Phases

    /// Calls the observers of `mode` watching `activity`, from a snapshot taken now.
    private func notifyObservers(_ activity: Activity, in mode: Mode) {
        guard hasHadObservers.load(ordering: .acquiring) else { return }
        // The observers notified last stand while no observer of any mode changed.
        let version = observersVersion.load(ordering: .acquiring)
        if local.observers.mode != mode || local.observers.version != version {
            local.observers = ObserverSnapshot(
                mode: mode, version: version, observers: state.withLock { $0.modes.read(mode) { $0.observers } ?? [] })
        }
        let snapshot = local.observers.observers
        for observer in snapshot where observer.activities.contains(activity) {
            // An observer whose callback is running is not called again from a nested run.
            guard observer.isValid, !observer.isFiring.exchange(true, ordering: .acquiring) else { continue }
            callingOutToObserver(observer, activity)
            if !observer.repeats { observer.invalidate() }
            observer.isFiring.store(false, ordering: .releasing)
        }
    }

    /// Runs the blocks queued for `mode` before this drain; blocks for other modes stay queued
    /// in order, and blocks that arrive once the drain is under way wait for a later one [B3].
    ///
    /// Blocks are taken from the shared queue (the whole queue at once when all of them run
    /// here, otherwise in runs of one lock each; see
    /// ``BlockQueue/take(runningIn:modeIsCommon:notAfter:into:)``) into
    /// ``ThreadLocalState/takenBlocks`` and run from there, oldest first: a run nested in a
    /// block finds the blocks this drain took and has not reached before those still queued,
    /// and may run them [B4].
    ///
    /// The drain is under way from its first take or its first block, whichever comes first:
    /// its limit (the newest block it may take) is fixed then, under the queue's lock, so a
    /// block another thread queues before that is as good as queued before the drain began,
    /// and one queued by a block of the drain, or after one of them started, waits.
    private func drainBlocks(in mode: Mode) {
        let mayTake = blocks.queuedCount > 0
        guard mayTake || !local.takenBlocks.isEmpty else { return }
        publish(.blocks)
        var version = commonModesVersion.load(ordering: .acquiring)
        var modeIsCommon = state.withLock { $0.commonModes.contains(mode) }
        var limit: UInt64?
        while true {
            guard let block = local.takenBlocks.removeFirst(runningIn: mode, modeIsCommon: modeIsCommon) else {
                guard mayTake,
                    blocks.take(runningIn: mode, modeIsCommon: modeIsCommon, notAfter: &limit, into: &local.takenBlocks)
                else {
                    return
                }
                continue
            }
            // A block an enclosing drain took runs before this drain took anything: what this
            // drain may take is what is queued now, before the block can queue more.
            if mayTake, limit == nil { limit = blocks.newestSequence }
            callingOutToBlock(block.body)
            // A block that made a mode common changes which of the next blocks run here.
            let current = commonModesVersion.load(ordering: .acquiring)
            if current != version {
                version = current
                modeIsCommon = state.withLock { $0.commonModes.contains(mode) }
            }
        }
    }

    /// Whether `mode` has nothing to serve: no source, no timer, no block queued or taken by
    /// a drain this run is nested in. On the loop's thread, with the state lock held.
    private func isEmpty(_ mode: Mode, _ state: borrowing LoopState) -> Bool {
        guard state.isEmpty(mode) else { return false }
        guard !local.takenBlocks.isEmpty else { return true }
        let modeIsCommon = state.commonModes.contains(mode)
        return !local.takenBlocks.contains(runningIn: mode, modeIsCommon: modeIsCommon)
    }

    /// Performs the signalled version-0 sources of `mode` by order, then first signal.
    private func performSignalledSources(in mode: Mode, onlyFirst: Bool) -> Bool {
        guard maybeSignalled.load(ordering: .acquiring) else { return false }
        // The thread's reused buffer, taken out for this call (a run nested in a callout below
        // finds none and makes its own): performing a signalled source allocates nothing.
        var ordered = local.signalledSources
        local.signalledSources = []
        defer {
            ordered.removeAll(keepingCapacity: true)
            local.signalledSources = ordered
        }
        let pruned: [Source] = state.withLock { state in
            let pruned = state.signalled.filter { !$0.isValid || !$0.isSignalled }
            if !pruned.isEmpty { state.signalled.removeAll { !$0.isValid || !$0.isSignalled } }
            if state.signalled.isEmpty { maybeSignalled.store(false, ordering: .relaxed) }
            state.modes.read(mode) { modeState in
                for source in state.signalled where modeState.contains(source) {
                    ordered.append((source, source.signalStamp.load(ordering: .acquiring)))
                }
            }
            return pruned
        }
        _ = pruned // Released here, with no lock held.
        guard !ordered.isEmpty else { return false }
        publish(.version0Sources)
        ordered.sort { $0.source.order != $1.source.order ? $0.source.order < $1.source.order : $0.stamp < $1.stamp }
        var performed = false
        for (source, _) in ordered {
            if performed, onlyFirst { break }
            // A callout may have taken a source out of the mode since they were gathered
            // (under the lock, just above: before the first callout nothing has changed).
            guard source.isValid,
                !performed || state.withLock({ $0.modes.read(mode) { $0.contains(source) } == true })
            else {
                continue
            }
            // Clear just before performing; a loop that lost the race to another loop skips it.
            guard source.signalStamp.exchange(0, ordering: .acquiringAndReleasing) != 0 else { continue }
            guard case let .signalled(perform) = source.kind else { continue }
            callingOutToVersion0Source(perform)
            performed = true
        }
        return performed
    }

    /// How a pass's wait went, for the statistics.
    private enum WaitOutcome {
        /// The wait did not sleep (a poll).
        case polled
        /// The wait slept; `woken`: another thread woke it for this sleep; `reachedDeadline`:
        /// it ran to the end it was planned with (a timer or the run's timeout).
        case slept(woken: Bool, reachedDeadline: Bool)
    }

    /// When and how a wait ends, decided under the loop's lock.
    private struct SleepPlan {
        /// When the wait ends by itself: `nil` sleeps until an event; `sleeps` false polls.
        var deadline: ContinuousClock.Instant?
        var sleeps: Bool
        /// The timer slack the wait needs (`nil`: the thread's own).
        var slack: UInt?

        /// Computed, not stored: a stored static is a lazily made global whose first use, inside
        /// a pass, allocates its storage.
        static var poll: SleepPlan { SleepPlan(deadline: nil, sleeps: false, slack: nil) }
    }

    /// Waits in the backend for the mode's ports, its next timer, the run's deadline or a wake.
    private func waitForWork(
        in mode: Mode, polls: Bool, drainsBackend: Bool, until runDeadline: ContinuousClock.Instant?
    ) -> WaitOutcome {
        publish(.beforeWaiting)
        syncDescriptors(for: mode)
        if polls {
            // A poll is a wait that returns at once: it consumes a pending wakeUp.
            wakeRequested.store(false, ordering: .relaxed)
            // With no descriptor to ask about, the kernel has nothing to tell a poll.
            // A backend with sources of its own, or a wake a host loop saw on the backend's
            // descriptor, has something to tell all the same.
            if registrar.watchesNothing, !backendServesOwnSources, !drainsBackend {
                return .polled
            }
        }
        return registrar.withBackend { backend in
            let plan = polls ? .poll : decideSleep(in: mode, until: runDeadline)
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

    /// Decides whether and until when to sleep and, when the loop sleeps, publishes it
    /// through ``SleepGate``.
    ///
    /// Decided under the state lock, so work posted under that lock either is seen here or
    /// finds the loop asleep and wakes it; blocks, posted under their own lock, and threads
    /// waiting for the backend are looked for after the loop has published that it sleeps.
    private func decideSleep(in mode: Mode, until runDeadline: ContinuousClock.Instant?) -> SleepPlan {
        let now = self.now
        return state.withLock { state in
            // This wait consumes every wakeUp posted before it.
            let woken = wakeRequested.exchange(false, ordering: .acquiring)
            // Sources added since the sync must be registered before sleeping: poll, and the
            // next pass syncs them.
            if woken || descriptorsChanged.load(ordering: .acquiring) || state.hasPendingWork(in: mode)
                || isEmpty(mode, state)
            {
                return .poll
            }
            var plan = SleepPlan(deadline: runDeadline, sleeps: true, slack: nil)
            if let timer = state.modes.update(mode, { $0.timerDeadline() }) ?? nil {
                let (wakeAt, slack) = local.timerSlack.plan(deadline: timer.instant, tolerance: timer.tolerance)
                if runDeadline.map({ wakeAt <= $0 }) ?? true {
                    plan.deadline = wakeAt
                    plan.slack = slack
                }
            }
            if let deadline = plan.deadline, deadline <= now { return .poll }
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
                registrar.hasWaiters || blocks.hasBlockForSleep(runningIn: mode, commonModes: commonModes)
            }
            guard sleeps else { return .poll }
            // What a timer added during the sleep is compared with: the latest the wait can
            // end, slack included, so that a timer due before then wakes the loop.
            state.sleepDeadline = plan.deadline.map { local.timerSlack.latestEnd(ofWaitUntil: $0, slack: plan.slack) }
            // Blocks taken by an enclosing drain are this thread's: what `addCommonMode` must
            // know of them is published with the sleep (they cannot change while it lasts).
            state.sleepHoldsBlocksForCommonModes =
                local.takenBlocks.contains(runningIn: mode, modeIsCommon: true)
            return plan
        }
    }

    /// Waits as `plan` says. A wait that returns with nothing to do before its deadline (a
    /// signal interrupted it, or a wake posted for an earlier sleep arrived late) waits
    /// again for what is left: every wait that ends has a reason.
    ///
    /// The timer slack narrowed for this wait stays narrowed after it (callouts run with it):
    /// putting it back would cost a system call between a timer's wake and its callout, and
    /// another before the next exact wait. A wait that needs the thread's own slack restores
    /// it, and so does the end of the outermost run.
    private func wait(in backend: any Backend, as plan: SleepPlan) -> WaitOutcome {
        // A sleep ends the loop's stretch of work and is counted: these two times bound it.
        let sleptAt: Int64? = plan.sleeps ? Nanoseconds.now() : nil
        if let sleptAt { fallAsleep(at: sleptAt) }
        while true {
            let timeout = plan.sleeps ? plan.deadline.map { max(.zero, $0 - now) } : .zero
            do {
                _ = try backend.wait(timeout: timeout, into: &local.events)
            } catch {
                // Interrupts, old kernels and sandboxes are handled by the backends; what is
                // left is a broken invariant (a closed epoll descriptor, say).
                preconditionFailure("RunLoopKit: \(backend.kind) wait failed: \(error)")
            }
            guard plan.sleeps, local.events.isEmpty, !sleep.wasWoken else { break }
            // The backend's own sources (GLib's) became ready: the pass dispatches them.
            if backendServesOwnSources, backend.hasOwnSourcesReady { break }
            if let deadline = plan.deadline, now >= deadline { break }
        }
        guard let sleptAt else { return .polled }
        // `sleepDeadline` is left as it is: it only matters while the loop sleeps, and the
        // next decision to sleep sets it again.
        let woken = sleep.endSleep()
        accountWake(sleptAt: sleptAt, wokeAt: Nanoseconds.now())
        return .slept(woken: woken, reachedDeadline: plan.deadline.map { now >= $0 } ?? false)
    }

    /// The loop goes to sleep at `time`: its time awake so far is counted, and the stretch of
    /// work it was in ends.
    private func fallAsleep(at time: Int64) {
        if let awakeSince = local.awakeSince { counters.add(from: awakeSince, to: time, asleep: false) }
        beginStretch(at: time, place: 0)
    }

    /// Accounts for a sleep from `sleptAt` to `wokeAt`: counted as time asleep, and the loop is
    /// awake from then on, in a new stretch of work.
    private func accountWake(sleptAt: Int64, wokeAt: Int64) {
        counters.add(from: sleptAt, to: wokeAt, asleep: true)
        local.awakeSince = wokeAt
        beginStretch(at: wokeAt, place: Loop.place(.afterWaiting))
    }

    /// Fires the timers of `mode` due by `limit`, in instant order, then order, then age.
    ///
    /// Popped one at a time, so a run nested in a callback can fire the remaining ones. A
    /// timer re-armed or added while these callbacks run fires in a later pass (see
    /// ``TimerQueue``), even when it is already due.
    /// - Returns: whether any timer fired.
    private func fireDueTimers(in mode: Mode, dueBy limit: ContinuousClock.Instant) -> Bool {
        // Nothing due (the common case of a pass woken for something else): no lock when no
        // timer of any mode can be due yet, one look otherwise.
        guard timerBound.mayBeDue(by: limit) else { return false }
        let step: UInt64? = state.withLock { state in
            let step = state.modes.update(mode) { $0.beginTimerStep(dueBy: limit) } ?? nil
            if step == nil { timerBound.set(state.modes.timerLowerBound) }
            return step
        }
        guard let step else { return false }
        publish(.timers)
        var fired = false
        // The time last read, for each timer's lateness: no clock read of its own.
        var calledAt = limit
        while let (timer, generation) = state.withLock({ state in
            state.modes.update(mode) { $0.popDueTimer(notAfter: limit, step: step) } ?? nil
        }) {
            if let returnedAt = fire(timer, armedAs: generation, calledAt: calledAt) {
                fired = true
                calledAt = returnedAt
            }
        }
        state.withLock { state in
            _ = state.modes.update(mode) { $0.timerQueue.endStep() }
            timerBound.set(state.modes.timerLowerBound)
        }
        return fired
    }

    /// Fires `timer` if it is still armed as `generation`; `calledAt` is about when its
    /// callback begins (for the lateness statistics).
    /// - Returns: when the callback returned, or `nil` when it did not run.
    private func fire(
        _ timer: Timer, armedAs generation: UInt64, calledAt: ContinuousClock.Instant
    )
        -> ContinuousClock.Instant?
    {
        let served: ContinuousClock.Instant? = timer.state.withLock { state in
            guard timer.isValid, !state.isFiring, timer.generation.load(ordering: .acquiring) == generation else {
                return nil
            }
            state.isFiring = true
            state.instantSetWhileFiring = nil
            // Every queued entry of this timer, in every mode, is now stale: nested runs skip it.
            timer.generation.add(1, ordering: .acquiringAndReleasing)
            return state.fireInstant
        }
        guard let served else { return nil }
        // A one-shot timer is invalidated before its callout, as CFRunLoop does.
        if timer.interval == nil { timer.invalidate() }
        counters.countTimerFire(lateness: calledAt - served)
        callingOutToTimer(timer)
        let now = self.now
        let rearm: (ContinuousClock.Instant, Duration, UInt64)? = timer.state.withLock { state in
            state.isFiring = false
            guard timer.isValid, let interval = timer.interval else { return nil }
            var next = served.nextOnGrid(every: interval, after: now)
            // T6: an instant set while the callback ran replaces the advance, sooner or later;
            // a past one means now (T1, T5), so the timer fires again in the next pass (it was
            // handled in this pass's timer step, which serves it no more).
            if let requested = state.instantSetWhileFiring { next = max(requested, now) }
            state.fireInstant = next
            return (next, state.tolerance, timer.generation.add(1, ordering: .acquiringAndReleasing).newValue)
        }
        if let (instant, tolerance, generation) = rearm {
            requeue(timer, at: instant, tolerance: tolerance, generation: generation)
        }
        return now
    }

    /// Handles the version-1 sources whose ports the last wait found ready, by order.
    /// - Returns: whether a source was handled, and whether the dispatch main queue is ready.
    private func handleReadySources(in mode: Mode) -> (handled: Bool, mainQueueReady: Bool) {
        guard !local.events.isEmpty else { return (false, false) }
        publish(.version1Sources)
        local.readySources.removeAll(keepingCapacity: true)
        let (mainQueueReady, sourceEvents) = registrar.collectReady(local.events, into: &local.readySources)
        local.events.removeAll(keepingCapacity: true)
        counters.countDescriptorEvents(sourceEvents)
        guard !local.readySources.isEmpty else { return (false, mainQueueReady) }
        if local.readySources.count > 1 {
            local.readySources.sort {
                $0.source.order != $1.source.order
                    ? $0.source.order < $1.source.order : $0.source.sequence < $1.source.sequence
            }
        }
        var handled = false
        // Take the buffer: a nested run inside a handler uses `local.readySources` afresh, and
        // the buffer goes back empty at the end so that it keeps no source (and through its
        // handler, no loop) alive after the pass.
        var ready: [(source: Source, readiness: Readiness)] = []
        swap(&ready, &local.readySources)
        defer {
            ready.removeAll(keepingCapacity: true)
            local.readySources = ready
        }
        // An error may mean the descriptor was closed (and its number reused) behind the
        // source's back: then the source is reported and invalidated, not called.
        let misused = Registrar.closedBehindTheirBack(ready)
        if !misused.isEmpty { invalidateUnwatchable(misused) }
        for (source, readiness) in ready {
            guard source.isValid, state.withLock({ $0.modes.read(mode) { $0.contains(source) } == true }) else {
                continue
            }
            switch source.kind {
            case let .descriptor(_, _, handler): callingOutToDescriptorSource(handler, readiness)
            case let .port(_, deliver, _): callingOutToPortSource(deliver, source)
            case .signalled: continue
            }
            handled = true
        }
        return (handled, mainQueueReady)
    }
}

extension ContinuousClock.Instant {
    /// The first instant `self + k × interval` (k ≥ 1) strictly after `now`: missed instants of
    /// a repeating timer are skipped, never queued.
    func nextOnGrid(every interval: Duration, after now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        var next = self + interval
        guard next <= now else { return next }
        // Jump to about now in one step (a ratio of durations, exact enough below 2^52
        // intervals), then settle on the first grid instant after now.
        let missed = ((now - self) / interval).rounded(.down)
        if missed.isFinite, missed < 4e18 { next = self + interval * Int64(missed) }
        while next <= now { next += interval }
        while next - interval > now { next -= interval }
        return next
    }

    /// `self + duration`, saturating instead of trapping for enormous timeouts.
    func advanced(bySaturating duration: Duration) -> ContinuousClock.Instant {
        let limit = Duration.seconds(Int64.max / 4)
        return self + min(duration, limit)
    }
}
