extension Loop {
    /// [R4] Performs the signalled version-0 sources of `mode` by order, then first signal (S2).
    func performSignalledSources(in mode: Mode, onlyFirst: Bool) -> Bool {
        guard hints.maySignalledSourcesWait() else { return false }
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
            if state.signalled.isEmpty { hints.noteNoneSignalled() }
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
            // [S3] Clear just before performing; a loop that lost the race to another loop skips it.
            guard source.signalStamp.exchange(0, ordering: .acquiringAndReleasing) != 0 else { continue }
            guard case let .signalled(perform) = source.kind else { continue }
            callingOutToVersion0Source(perform)
            performed = true
        }
        return performed
    }
}
