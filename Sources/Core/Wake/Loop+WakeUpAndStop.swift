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
