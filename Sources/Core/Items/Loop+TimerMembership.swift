extension Loop {
    /// Adds `timer` to `mode` (to every common mode for ``Mode/common``).
    ///
    /// A timer belongs to one loop: adding it to a second loop is a programming error that
    /// traps with a message, and so does adding a timer whose handler is main-actor code to a
    /// loop other than `Loop.main`. A fire instant already past becomes now. Adding an
    /// invalidated timer has no effect. Safe to call from any thread.
    public func add(_ timer: Timer, to mode: Mode) {
        timer.isolation.admit(timer, to: self, by: "Loop.add(_:to:)")
        attach(timer) { state in
            if mode == .common { state.commonTimers.insert(timer) }
            return state.targets(of: mode)
        }
    }

    /// Puts `timer` into the modes `targets` names (picked under the loop's lock), unless it
    /// was invalidated; the one path by which a timer joins a mode.
    func attach(_ timer: Timer, targets: (inout LoopState) -> [Mode]) {
        let wake: Bool = timer.state.withLock { timerState in
            guard timer.isValid else { return false }
            if timerState.isBound, let owner = timerState.loop.loop, owner !== self {
                trap(
                    "Loop.add(_:to:): \(timer) already belongs to \(owner); a timer can be added to one loop only")
            }
            // A timer never bound is in no mode: joining needs no look for it in each mode's table.
            let wasBound = timerState.isBound
            timerState.isBound = true
            // A timer made with `after:` counts its delay from a virtual loop's time when it joins
            // (the moment T1 reads for a past instant).
            if let delay = timerState.delayUntilAdded {
                timerState.delayUntilAdded = nil
                if !clock.readsRealTime { timerState.fireInstant = now + delay }
            }
            timerState.loop = WeakLoop(loop: self)
            if timer.addSequence.load(ordering: .relaxed) == 0 {
                timer.addSequence.store(Ordinal.next(), ordering: .relaxed)
            }
            return state.withLock { state in
                guard !state.isTornDown else { return false }
                let id = ObjectIdentifier(timer)
                // Clamped only when it first joins this loop's modes (through add or a mode
                // made common): a timer already queued and overdue is simply due. Clamping
                // re-anchors a repeating timer's grid.
                if !timerState.isFiring, !wasBound || !state.modes.containsMode(where: { $0.timers[id] != nil }) {
                    let now = self.now
                    if timerState.fireInstant < now {
                        timerState.fireInstant = now
                        timer.generation.add(1, ordering: .acquiringAndReleasing)
                    }
                }
                let generation = timer.generation.load(ordering: .acquiring)
                // On the queues' scale, rounded up: converted once, compared as integers.
                let instant = QueueTime.nanosecondsRoundedUp(timerState.fireInstant)
                let tolerance = timerState.tolerance.nanosecondsRoundedUp
                // A firing timer is queued again by the loop when its callback returns.
                let queues = !timerState.isFiring
                var wake = false
                for target in targets(&state) {
                    let joined = state.modes[target, default: ModeState()].join(timer, id: id) { modeState in
                        if queues { modeState.queue(timer, at: instant, tolerance: tolerance, generation: generation) }
                    }
                    if joined, queues { hints.lowerTimerBound(toNanoseconds: instant) }
                    if joined, state.currentMode == target,
                        state.sleepDeadline.map({ instant.addingSaturating(tolerance) < $0 }) ?? true
                    {
                        wake = true
                    }
                }
                return wake
            }
        }
        if wake { sleep.wake() }
    }

    /// Removes `timer` from `mode` (from every common mode for ``Mode/common``).
    ///
    /// The timer stays valid and bound to this loop. Safe to call from any thread.
    public func remove(_ timer: Timer, from mode: Mode) {
        let wake: Bool = state.withLock { state in
            if mode == .common { state.commonTimers.remove(timer) }
            for target in state.targets(of: mode) { state.modes[target]?.removeTimer(ObjectIdentifier(timer)) }
            return sleepingModeEmptied(state)
        }
        if wake { sleep.wake() }
    }

    /// Whether `timer` is in `mode` (for ``Mode/common``: was added to the common modes).
    ///
    /// Safe to call from any thread.
    public func contains(_ timer: Timer, in mode: Mode) -> Bool {
        state.withLock { state in
            mode == .common
                ? state.commonTimers.contains(timer)
                : state.modes.read(mode) { $0.timers[ObjectIdentifier(timer)] != nil } == true
        }
    }

    /// Removes an invalidated timer from every mode.
    func detach(_ timer: Timer) {
        let wake: Bool = state.withLock { state in
            state.commonTimers.remove(timer)
            state.modes.updateEach { $0.removeTimer(ObjectIdentifier(timer), invalidated: true) }
            return sleepingModeEmptied(state)
        }
        if wake { sleep.wake() }
    }

    /// Queues a re-armed timer in every mode it is in, waking the loop if it must wake sooner
    /// [W4].
    func requeue(_ timer: Timer, at instant: ContinuousClock.Instant, tolerance: Duration, generation: UInt64) {
        // On the queues' scale, rounded up, converted before the lock is taken.
        requeue(
            timer, atNanoseconds: QueueTime.nanosecondsRoundedUp(instant), tolerance: tolerance.nanosecondsRoundedUp,
            generation: generation)
    }

    /// ``requeue(_:at:tolerance:generation:)`` with the instant and tolerance on the queues'
    /// scale (nanoseconds, rounded up).
    func requeue(_ timer: Timer, atNanoseconds instant: Int64, tolerance: Int64, generation: UInt64) {
        let wake: Bool = state.withLock { state in
            var wake = false
            let id = ObjectIdentifier(timer)
            let (currentMode, sleepDeadline) = (state.currentMode, state.sleepDeadline)
            state.modes.updateEach { mode, modeState in
                guard modeState.timers[id] != nil else { return }
                modeState.queue(timer, at: instant, tolerance: tolerance, generation: generation)
                hints.lowerTimerBound(toNanoseconds: instant)
                if currentMode == mode, sleepDeadline.map({ instant.addingSaturating(tolerance) < $0 }) ?? true {
                    wake = true
                }
            }
            return wake
        }
        if wake { sleep.wake() }
    }
}
