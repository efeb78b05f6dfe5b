extension Loop {
    /// Adds `source` to `mode` (to every common mode for ``Mode/common``).
    ///
    /// Adding a source to a mode it is in, or adding an invalidated source, has no effect. The
    /// source's `schedule` callback runs once per mode it joins, on the calling thread (or, when
    /// another thread is making this source's callouts at that moment, on that thread, right
    /// after its own: `schedule` and `cancel` are always called in the order the source joined
    /// and left its modes). Adding a source whose handler is main-actor code to a loop other
    /// than `Loop.main` traps with a message. Safe to call from any thread.
    public func add(_ source: Source, to mode: Mode) {
        source.isolation.admit(source, to: self, by: "Loop.add(_:to:)")
        attach(source) { state in
            if mode == .common { state.commonSources.insert(source) }
            return state.targets(of: mode)
        }
    }

    /// Puts `source` into the modes `targets` names (picked under the loop's lock), unless it
    /// was invalidated; the one path by which a source joins a mode.
    func attach(_ source: Source, targets: (inout LoopState) -> [Mode]) {
        let wake: Bool = source.loops.withLock { loops in
            guard source.isValid else { return false }
            let (added, wake): ([Mode], Bool) = state.withLock { state in
                guard !state.isTornDown else { return ([], false) }
                var added: [Mode] = []
                for target in targets(&state) where state.modes[target, default: ModeState()].insert(source) {
                    added.append(target)
                }
                guard !added.isEmpty else { return ([], false) }
                // A source signalled while in no mode of this loop is performed once it joins.
                if source.isVersion0, source.isSignalled, !state.signalled.contains(source) {
                    state.signalled.append(source)
                    hints.noteSignalled()
                }
                if !source.isVersion0 { hints.noteDescriptorsChanged() }
                let wake =
                    state.currentMode.map { added.contains($0) && (!source.isVersion0 || source.isSignalled) } ?? false
                return (added, wake)
            }
            if !added.isEmpty {
                loops[ObjectIdentifier(self)] = WeakLoop(loop: self)
                source.queueCallouts(joined: true, loop: self, modes: added)
            }
            return wake
        }
        if wake { sleep.wake() }
        source.makeQueuedCallouts()
    }

    /// Removes `source` from `mode` (from every common mode for ``Mode/common``).
    ///
    /// A descriptor no mode's source needs any more leaves the backend before this returns, so
    /// the caller may close it right away. The source's `cancel` callback runs once per mode
    /// it leaves (on which thread: see `add(_:to:)`). Safe to call from any thread.
    public func remove(_ source: Source, from mode: Mode) {
        let (removed, wake): ([Mode], Bool) = source.loops.withLock { loops in
            let (removed, stillMember, wake): ([Mode], Bool, Bool) = state.withLock { state in
                if mode == .common { state.commonSources.remove(source) }
                var removed: [Mode] = []
                for target in state.targets(of: mode) where state.modes[target]?.remove(source) == true {
                    removed.append(target)
                }
                if !source.isVersion0, !removed.isEmpty { hints.noteDescriptorsChanged() }
                // Still a member while in the common set, though in no mode: invalidate must
                // find this loop to take it out of that set.
                let stillMember = state.containsAnywhere(source) || state.commonSources.contains(source)
                return (removed, stillMember, sleepingModeEmptied(state))
            }
            if !stillMember { loops[ObjectIdentifier(self)] = nil }
            source.queueCallouts(joined: false, loop: self, modes: removed)
            return (removed, wake)
        }
        if wake { sleep.wake() }
        if !source.isVersion0, !removed.isEmpty { releaseRemovedDescriptors() }
        source.makeQueuedCallouts()
    }

    /// Whether `source` is in `mode` (for ``Mode/common``: was added to the common modes).
    ///
    /// Safe to call from any thread.
    public func contains(_ source: Source, in mode: Mode) -> Bool {
        state.withLock { state in
            mode == .common
                ? state.commonSources.contains(source) : state.modes.read(mode) { $0.contains(source) } == true
        }
    }

    /// A version-0 source of this loop was signalled: a loop asleep in a mode of the source
    /// wakes for it [W3].
    func sourceWasSignalled(_ source: Source) {
        let wake: Bool = state.withLock { state in
            guard state.containsAnywhere(source) else { return false }
            if !state.signalled.contains(source) { state.signalled.append(source) }
            hints.noteSignalled()
            guard let mode = state.currentMode else { return false }
            return state.modes.read(mode, { $0.contains(source) }) == true
        }
        if wake { sleep.wake() }
    }

    /// Removes an invalidated source from every mode; returns the modes it was in.
    ///
    /// Called with the source's lock held; the caller releases removed descriptors
    /// (``releaseRemovedDescriptors()``) once it has let go of that lock.
    func detach(_ source: Source) -> [Mode] {
        let (removed, wake): ([Mode], Bool) = state.withLock { state in
            state.commonSources.remove(source)
            state.signalled.removeAll { $0 === source }
            var removed: [Mode] = []
            state.modes.updateEach { mode, modeState in if modeState.remove(source) { removed.append(mode) } }
            if !source.isVersion0, !removed.isEmpty { hints.noteDescriptorsChanged() }
            return (removed, sleepingModeEmptied(state))
        }
        if wake { sleep.wake() }
        return removed
    }
}

extension ModeState {
    /// Inserts `source`; false when it was already there.
    mutating func insert(_ source: Loop.Source) -> Bool {
        let id = ObjectIdentifier(source)
        if source.isVersion0 {
            return versionZero.updateValue(source, forKey: id) == nil
        }
        guard versionOne.updateValue(source, forKey: id) == nil else { return false }
        if let (fd, _) = source.watchedDescriptor { watched.add(source, on: fd) }
        return true
    }

    /// Removes `source`; false when it was not there.
    mutating func remove(_ source: Loop.Source) -> Bool {
        let id = ObjectIdentifier(source)
        if source.isVersion0 { return versionZero.removeValue(forKey: id) != nil }
        guard versionOne.removeValue(forKey: id) != nil else { return false }
        if let (fd, _) = source.watchedDescriptor { watched.remove(source, from: fd) }
        return true
    }
}
