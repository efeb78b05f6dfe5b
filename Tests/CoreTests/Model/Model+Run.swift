/// One run, as the behaviour contract's "One run" lists it.
extension Model {
    func run(_ mode: ModeName, timeout: Int?, returnAfterSourceHandled once: Bool) -> String {
        // 1. `common` is not a mode; an empty mode is not entered (no observer is called).
        guard mode != .common, !isEmpty(mode) else { return "finished" }
        runs.append(RunState(mode: mode))
        // Wakes posted before this run are not for it.
        wakePending = false
        let polls = timeout.map { $0 <= 0 } ?? false
        let deadline = timeout.map { now + max($0, 0) }
        var handledSource = false
        // 2. `entry` observers may already have stopped this run: then no pass at all.
        notify(.entry, in: mode)
        var result: String? = runs.last!.stopped ? "stopped" : nil
        while result == nil {
            // 3.1
            notify(.beforeTimers, in: mode)
            notify(.beforeSources, in: mode)
            drainBlocks(in: mode)
            // 3.2
            var passPolls = polls
            if performSignalledSources(in: mode, onlyFirst: once) {
                handledSource = true
                drainBlocks(in: mode)
                passPolls = true
            }
            // 3.3: a mode that became empty does not sleep: straight to the decision.
            if passPolls || !isEmpty(mode) {
                if !passPolls { notify(.beforeWaiting, in: mode) }
                // 3.4
                wait(in: mode, polls: passPolls, until: deadline)
                if !passPolls { notify(.afterWaiting, in: mode) }
                // 3.5 (no version-1 sources in the model)
                fireDueTimers(in: mode)
            }
            // 3.6
            drainBlocks(in: mode)
            // 3.7
            if once, handledSource {
                result = "handledSource"
            } else if polls || deadline.map({ now >= $0 }) == true {
                result = "timedOut"
            } else if runs.last!.stopped {
                result = "stopped"
            } else if isEmpty(mode) {
                result = "finished"
            }
        }
        // 4.
        notify(.exit, in: mode)
        runs.removeLast()
        // A wake this run did not consume is not carried over to an outer run.
        wakePending = false
        return result!
    }

    /// Empty: neither sources nor timers in it, nor a queued block that would run in it
    /// (observers are not counted).
    func isEmpty(_ mode: ModeName) -> Bool {
        !sources.contains { $0.modes.contains(mode) }
            && !timers.contains { $0.modes.contains(mode) }
            && !blocks.contains { runs($0, in: mode) }
    }

    /// `common` in a block's modes stands for the common modes when the block would run.
    func runs(_ block: Block, in mode: ModeName) -> Bool {
        block.modes.contains(mode) || (block.modes.contains(.common) && commonModes.contains(mode))
    }

    /// A snapshot of the mode's observers of `activity`, by order then by when added; one
    /// whose callback is running is skipped, one invalidated meanwhile is not called.
    func notify(_ activity: ActivityName, in mode: ModeName) {
        let snapshot = (observersByMode[mode] ?? []).enumerated()
            .filter { program.observers[$0.element].activities.contains(activity) }
            .sorted {
                (program.observers[$0.element].order, $0.offset) < (program.observers[$1.element].order, $1.offset)
            }
            .map(\.element)
        for index in snapshot where observers[index].valid && !observers[index].firing {
            observers[index].firing = true
            callout(.observer(index), "observer o\(index) \(activity.rawValue)")
            if !program.observers[index].repeats { invalidate(.observer(index)) }
            observers[index].firing = false
        }
    }

    /// FIFO, up to the newest block queued when the drain began; a nested run drains the same
    /// queue, so it sees (and may run) the blocks this drain has not reached.
    func drainBlocks(in mode: ModeName) {
        guard let newest = blocks.last?.id else { return }
        while let index = blocks.firstIndex(where: { $0.id <= newest && runs($0, in: mode) }) {
            let block = blocks.remove(at: index)
            log("block b\(block.id) in \(mode)")
            execute(script.blockAction(block.action))
        }
    }

    /// The sources signalled when the pass collects them, by order then first signal; each
    /// flag is cleared just before its perform. Signalled during this step: next pass.
    func performSignalledSources(in mode: ModeName, onlyFirst: Bool) -> Bool {
        let ready = sources.indices
            .filter { sources[$0].signalled && sources[$0].modes.contains(mode) }
            .sorted {
                (program.sources[$0].order, sources[$0].firstSignal) < (
                    program.sources[$1].order, sources[$1].firstSignal
                )
            }
        var performed = false
        for index in ready {
            if performed, onlyFirst { break }
            // Performed meanwhile by a nested run, removed, or invalidated: skipped.
            guard sources[index].signalled, sources[index].modes.contains(mode) else { continue }
            sources[index].signalled = false
            callout(.source(index), "source s\(index)")
            performed = true
        }
        return performed
    }

    /// Until the next timer is due or the run's deadline; at once when there is work already,
    /// a wake or a stop is pending, or the mode is empty. Consumes every pending wake.
    ///
    /// A sleep with no end is ended the way another thread would end it: by `stop()`, which
    /// wakes the loop (the scripted backend does that when asked to wait without a timeout).
    func wait(in mode: ModeName, polls: Bool, until deadline: Int?) {
        let mustNotSleep =
            polls || wakePending || runs.last!.stopped || isEmpty(mode)
            || sources.contains { $0.signalled && $0.modes.contains(mode) }
            || blocks.contains { runs($0, in: mode) }
        wakePending = false
        guard !mustNotSleep else { return }
        let nextTimer = timers.filter { $0.modes.contains(mode) && !$0.firing }.map(\.instant).min()
        guard let end = [deadline, nextTimer].compactMap({ $0 }).min() else {
            log(Self.endlessSleep)
            runs[runs.count - 1].stopped = true
            return
        }
        now = max(now, end)
    }

    /// The timers due when the wait returned, by instant, order, then when added. One that
    /// falls due (or is re-armed) while these callbacks run fires in a later pass.
    func fireDueTimers(in mode: ModeName) {
        let due = timers.indices
            .filter { timers[$0].modes.contains(mode) && !timers[$0].firing && timers[$0].instant <= now }
            .sorted {
                (timers[$0].instant, program.timers[$0].order, timers[$0].firstAdded)
                    < (timers[$1].instant, program.timers[$1].order, timers[$1].firstAdded)
            }
            .map { ($0, timers[$0].arming) }
        for (index, arming) in due where timers[index].arming == arming && timers[index].modes.contains(mode) {
            fire(timer: index)
        }
    }

    func fire(timer index: Int) {
        let served = timers[index].instant
        timers[index].firing = true
        timers[index].setWhileFiring = nil
        timers[index].arming += 1
        let interval = program.timers[index].interval
        // A one-shot timer is invalidated before its callback.
        if interval == nil { invalidate(.timer(index)) }
        callout(.timer(index), "timer t\(index) @\(TraceFormat.time(milliseconds: served))")
        timers[index].firing = false
        guard timers[index].valid, let interval else { return }
        // The next instant of the grid that lies after now; those already past are dropped.
        var next = served + ((now - served) / interval + 1) * interval
        // Set inside the callback, any instant replaces the advance; a past one means now.
        if let requested = timers[index].setWhileFiring { next = max(requested, now) }
        timers[index].instant = next
        timers[index].arming += 1
    }

    func callout(_ item: ItemRef, _ event: String) {
        log("\(event) in \(runs.last!.mode)")
        execute(script.nextAction(of: item))
    }
}
