extension Loop {
    /// [R7] Handles the version-1 sources whose ports the last wait found ready, by order (D6).
    /// - Returns: whether a source was handled, and whether the dispatch main queue is ready.
    func handleReadySources(in mode: Mode) -> (handled: Bool, mainQueueReady: Bool) {
        guard !local.events.isEmpty else { return (false, false) }
        publish(.version1Sources)
        local.readySources.removeAll(keepingCapacity: true)
        var mainQueueReady = false
        var sourceEvents = 0
        // [D8] Another thread may have unregistered a descriptor since the wait: its event is stale.
        backendAccess.withLock { access in
            for event in local.events {
                if access.descriptors.isMainQueue(event.token) {
                    mainQueueReady = true
                    continue
                }
                guard let sources = access.descriptors.sources(for: event.token) else { continue }
                sourceEvents += 1
                for source in sources {
                    guard let (_, interest) = source.watchedDescriptor, event.readiness.concerns(interest) else {
                        continue
                    }
                    local.readySources.append((source, event.readiness))
                }
            }
        }
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
        let misused = ready.contains { $0.readiness.contains(.error) } ? closedBehindTheirBack(ready) : []
        if !misused.isEmpty { invalidate(misused) }
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

extension Loop {
    /// The sources among `ready` reporting an error whose descriptor no longer names the
    /// file they were made for.
    fileprivate func closedBehindTheirBack(
        _ ready: [(source: Source, readiness: Readiness)]
    ) -> [DescriptorTable.Unwatchable] {
        ready.compactMap { source, readiness in
            guard readiness.contains(.error), let (fd, _) = source.watchedDescriptor else { return nil }
            let now = FileIdentity(of: fd)
            guard now != source.fileIdentity else { return nil }
            return .closed(source, descriptor: fd, nowNames: now)
        }
    }
}
