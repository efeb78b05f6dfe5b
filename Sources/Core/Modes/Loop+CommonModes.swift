extension Loop {
    /// Makes `mode` common: it receives every item added to ``Mode/common``, now and later.
    ///
    /// The mode is created if it did not exist. Safe to call from any thread.
    public func addCommonMode(_ mode: Mode) {
        guard mode != .common else { return }
        let (sources, timers, wake): ([Source], [Timer], Bool) = state.withLock { state in
            guard !state.isTornDown, state.commonModes.insert(mode).inserted else { return ([], [], false) }
            hints.noteCommonModesChanged()
            if !state.modes.contains(mode) { state.modes[mode] = ModeState() }
            for observer in state.commonObservers.inOrder where observer.isValid {
                _ = state.modes.update(mode) { $0.insertObserver(observer) }
            }
            // A block queued for the common modes now runs in `mode` too: a loop asleep in
            // `mode` must wake for it, whether the block is still queued or held in the batch
            // of a drain the sleeping run is nested in. (The loop decides to sleep under this
            // lock, so it either saw the new common mode or is seen asleep here.)
            hints.noteObserversChanged()
            let wake =
                state.currentMode == mode
                && (state.sleepHoldsBlocksForCommonModes
                    || blocks.hasBlock(runningIn: mode, commonModes: state.commonModes))
            return (state.commonSources.inOrder, state.commonTimers.inOrder, wake)
        }
        if wake { sleep.wake() }
        // Each timer and source joins the way `add(_:to:)` adds it, under its own lock first
        // (a timer's or source's lock comes before the loop's): one that was invalidated or
        // removed from the common modes meanwhile stays out.
        for timer in timers {
            attach(timer) { state in
                state.commonModes.contains(mode) && state.commonTimers.contains(timer) ? [mode] : []
            }
        }
        for source in sources {
            attach(source) { state in
                state.commonModes.contains(mode) && state.commonSources.contains(source) ? [mode] : []
            }
        }
    }
}
