extension Loop {
    /// Whether the loop, asleep, has work that will end its sleep: a wake claimed for it, not
    /// yet delivered, or work posted and seen that way (a block queued; a source signalled, by
    /// a poster that found it signalled already and left the wake to the first). For
    /// RunLoopKitTesting, which must not take such a loop for settled. Safe from any thread.
    package var hasWorkWhileAsleep: Bool {
        if sleep.wasWoken { return true }
        return state.withLock { state in
            guard let mode = state.currentMode else { return false }
            return state.hasPendingWork(in: mode)
                || blocks.hasBlockForSleep(runningIn: mode, commonModes: state.commonModes)
        }
    }
}
