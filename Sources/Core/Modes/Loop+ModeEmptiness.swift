extension Loop {
    /// Whether `mode` has nothing to serve from any thread's view: no source, no timer, no
    /// block queued for it (R1, R5). State lock held. The loop's own thread also counts the
    /// blocks a drain it is nested in took (``isEmpty(_:_:)``).
    func hasNothingQueued(in mode: Mode, _ state: borrowing LoopState) -> Bool {
        guard state.hasNoItems(in: mode) else { return false }
        return !blocks.hasBlock(runningIn: mode, commonModes: state.commonModes)
    }

    /// Whether the sleeping loop must wake because its mode has just become empty, so that
    /// the run ends now instead of at its next timer or timeout. State lock held; any thread.
    func sleepingModeEmptied(_ state: borrowing LoopState) -> Bool {
        guard sleep.isAsleep, let mode = state.currentMode else { return false }
        return hasNothingQueued(in: mode, state)
    }
}
