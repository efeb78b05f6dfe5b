extension Loop {
    /// Takes the descriptors that no source needs any more out of the backend now, from any
    /// thread, waking the loop if it sleeps holding the backend ([D7]); then reports and
    /// invalidates what cannot be watched.
    func releaseRemovedDescriptors() {
        invalidateUnwatchable(
            registrar.releaseRemoved(waking: sleep) { registered in
                guard let mode = registered.mode else { return nil }
                return watchedDescriptorChanges(in: mode, mainQueue: registered.mainQueue, registered: registered)
            })
    }

    /// Registers the descriptors of `mode`'s version-1 sources (and, on the main loop, the
    /// dispatch main queue's) in the backend, when they changed since the last pass.
    func syncDescriptors(for mode: Mode) {
        let mainQueue = isMain && state.withLock { $0.watchesMainQueue(in: mode) } ? local.mainQueuePort : nil
        invalidateUnwatchable(
            registrar.sync(mode, mainQueue: mainQueue, mayHaveChanged: hints.mayDescriptorsHaveChanged()) {
                watchedDescriptorChanges(in: mode, mainQueue: mainQueue, registered: $0)
            })
    }

    /// What mode membership hands the registrar for `mode`: its descriptors (all of them, or
    /// those changed since the registrar last took them when it has `mode` registered), or
    /// `nil` when neither they nor the mode nor the main queue changed. Called by the registrar
    /// with the backend lock held; takes the state lock (the documented order).
    private func watchedDescriptorChanges(
        in mode: Mode, mainQueue: Int32?, registered: Registrar.Registered
    ) -> DescriptorTable.Changes? {
        state.withLock { state in
            guard hints.haveDescriptorsChanged() || registered.mode != mode || registered.mainQueue != mainQueue
            else { return nil }
            hints.noteDescriptorsSynced()
            return state.modes.update(mode) { $0.watched.take(all: registered.mode != mode) } ?? .all([:])
        }
    }

    /// Reports (through ``Loop/logger``) and invalidates sources that cannot be watched, and
    /// reports a main queue that cannot be. No lock may be held: invalidating calls a
    /// source's `cancel` callbacks, and a log handler is the user's code.
    func invalidateUnwatchable(_ unwatchable: [Unwatchable]) {
        for entry in unwatchable {
            // [D8] A descriptor closed behind its source's back is reported, and the source
            // invalidated: it never hears about a stranger's file.
            report(entry)
            entry.source?.invalidate()
        }
    }
}
