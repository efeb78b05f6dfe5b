extension Loop {
    /// [R7] Handles the version-1 sources whose ports the last wait found ready, by order (D6).
    /// - Returns: whether a source was handled, and whether the dispatch main queue is ready.
    func handleReadySources(in mode: Mode) -> (handled: Bool, mainQueueReady: Bool) {
        guard !local.events.isEmpty else { return (false, false) }
        publish(.version1Sources)
        local.readySources.removeAll(keepingCapacity: true)
        // [D8] Another thread may have unregistered a descriptor since the wait: the
        // registrar drops its stale event.
        let (mainQueueReady, sourceEvents) = registrar.collectReady(local.events, into: &local.readySources)
        local.events.removeAll(keepingCapacity: true)
        instruments.counters.countDescriptorEvents(sourceEvents)
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
        // [D8] An error may mean the descriptor was closed (and its number reused) behind the
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
