/// One run, as the behaviour contract's "One run" lists it.
extension Model {
    func run(_ mode: ModeName, timeout: Int?, returnAfterSourceHandled once: Bool) -> String {
        // 1. `common` is not a mode; an empty mode is not entered (no observer is called).
        guard mode != .common, !isEmpty(mode) else { return "finished" }
        runs.append(RunState(mode: mode))
        // Wakes posted before this run are not for it.
        wakePending = false
        let polls = timeout.map { $0 <= 0 } ?? false
        let deadline = timeout.map { now + max($0, 0) * Self.millisecond }
        var handledSource = false
        // 2. `entry` observers may already have stopped this run: then no pass at all.
        notify(.entry, in: mode)
        var result: String? = runs.last!.stopped ? "stopped" : nil
        while result == nil {
            // A model that disagrees with itself (it follows Core's choices) must still end.
            passesThisStep += 1
            if passesThisStep == Self.passesPerStepLimit {
                log("model: more than \(Self.passesPerStepLimit) passes in one step")
            }
            if passesThisStep >= Self.passesPerStepLimit { runs[runs.count - 1].stopped = true }
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
                // 3.5: timers first, then the version-1 sources (R7).
                fireDueTimers(in: mode)
                if handleReadyDescriptors(in: mode) { handledSource = true }
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
            && !descriptorSources.contains { $0.modes.contains(mode) }
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

    /// Until the next timer is due (within its tolerance) or the run's deadline; at once when
    /// there is work already, a descriptor is ready, a wake or a stop is pending, or the mode
    /// is empty. Consumes every pending wake. Finds the mode's ready descriptor sources.
    ///
    /// A sleep with no end is ended the way another thread would end it: by `stop()`, which
    /// wakes the loop (the scripted backend does that when asked to wait without a timeout).
    func wait(in mode: ModeName, polls: Bool, until deadline: Int?) {
        let ready = readyDescriptors(in: mode)
        let mustNotSleep =
            polls || wakePending || runs.last!.stopped || isEmpty(mode) || !ready.isEmpty
            || sources.contains { $0.signalled && $0.modes.contains(mode) }
            || blocks.contains { runs($0, in: mode) }
        wakePending = false
        defer { readyBatch = ready }
        guard !mustNotSleep else { return }
        // T9: a timer may be served anywhere from its instant to its instant plus its
        // tolerance; the sleep must end by the first such deadline, and may end once the first
        // timer is due (never before: a wake has a reason, C3). The run's deadline caps both.
        let armed = timers.filter { $0.modes.contains(mode) && !$0.firing }
        let due = armed.map(\.instant).min()
        let latest = armed.map { $0.instant + $0.tolerance }.min()
        guard let end = [deadline, latest].compactMap({ $0 }).min() else {
            log(Self.endlessSleep)
            runs[runs.count - 1].stopped = true
            return
        }
        sleep(from: [deadline, due].compactMap { $0 }.min()!, to: end)
    }

    /// A sleep that may end anywhere from `earliest` to `latest` (an exact timer or the run's
    /// deadline: one instant). Ending at once is allowed when `earliest` has passed.
    ///
    /// Where the window leaves a choice, the contract does not say which instant, so Core's
    /// choice is read from its trace (the line at this position of this step) and checked: a
    /// sleep must end inside the window; no sleep (the line is something else) only when the
    /// window allows now. A choice outside the window is logged as such, which Core's trace
    /// lacks: the traces then differ there.
    func sleep(from earliest: Int, to latest: Int) {
        guard latest > now else { return }
        if earliest == latest {
            log(TraceFormat.sleep(until: Int64(latest)))
            now = latest
            return
        }
        let window =
            "[\(TraceFormat.time(nanoseconds: Int64(earliest))), \(TraceFormat.time(nanoseconds: Int64(latest)))]"
        let prefix = "\(TraceFormat.time(nanoseconds: Int64(now))) sleep until "
        let line = observed.flatMap { trace in
            stepIndex < trace.steps.count && events.count < trace.steps[stepIndex].count
                ? trace.steps[stepIndex][events.count] : nil
        }
        // When Core's choice is not allowed, the model says so and goes on as if the sleep had
        // ended at the latest instant allowed (so that it ends, as Core's run may not).
        guard let line, line.hasPrefix(prefix) else {
            guard earliest > now else { return }
            log("sleep until a moment in \(window) (T9)")
            now = latest
            return
        }
        guard let end = TraceFormat.nanoseconds(parsing: line.dropFirst(prefix.count)), end >= earliest,
            end <= latest, end > now
        else {
            log("\(line.dropFirst(prefix.count - "sleep until ".count)), outside the window \(window) (T9)")
            now = latest
            return
        }
        log(TraceFormat.sleep(until: end))
        now = Int(end)
    }

    /// The descriptor sources of `mode` whose descriptor is ready for what they watch, with
    /// what it reported: what was asked, hang-ups and errors whatever was asked (D3).
    func readyDescriptors(in mode: ModeName) -> [ReadyEvent] {
        descriptorSources.indices.compactMap { index in
            guard descriptorSources[index].modes.contains(mode) else { return nil }
            let reported = readiness[index].intersection(program.descriptors[index].interest.reported)
            guard !reported.isEmpty else { return nil }
            return ReadyEvent(
                index: index, readiness: reported, departures: descriptorSources[index].departures[mode, default: 0])
        }
    }

    /// The ready descriptor sources the last wait found, by order then age (D6); one that is
    /// no longer valid and in the mode at its turn, or left the mode since the wait (its
    /// registration ended: D8), is skipped. Takes the batch: a run nested in a callout finds
    /// none. Returns whether a source was handled.
    func handleReadyDescriptors(in mode: ModeName) -> Bool {
        let batch = readyBatch.sorted {
            (program.descriptors[$0.index].order, $0.index) < (program.descriptors[$1.index].order, $1.index)
        }
        readyBatch = []
        var handled = false
        for event in batch {
            let source = descriptorSources[event.index]
            guard source.valid, source.modes.contains(mode), source.departures[mode, default: 0] == event.departures
            else { continue }
            callout(.descriptor(event.index), "source d\(event.index) \(ReadinessName.describe(event.readiness))")
            handled = true
        }
        return handled
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
        let interval = program.timers[index].interval.map { $0 * Self.millisecond }
        // A one-shot timer is invalidated before its callback.
        if interval == nil { invalidate(.timer(index)) }
        callout(.timer(index), "timer t\(index) @\(TraceFormat.time(nanoseconds: Int64(served)))")
        timers[index].firing = false
        guard timers[index].valid, let interval else { return }
        // The next instant of the grid that lies after now; those already past are dropped.
        var next = served + ((now - served) / interval + 1) * interval
        // Set inside the callback, any instant replaces the advance; a past one means now (T6).
        if let requested = timers[index].setWhileFiring { next = max(requested, now) }
        timers[index].instant = next
        timers[index].arming += 1
    }

    func callout(_ item: ItemRef, _ event: String) {
        log("\(event) in \(runs.last!.mode)")
        execute(script.nextAction(of: item))
    }
}
