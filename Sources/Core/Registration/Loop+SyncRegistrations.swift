extension Loop {
    /// Takes the descriptors that no source needs any more out of the backend now, from any
    /// thread (see ``BackendAccess``).
    func releaseRemovedDescriptors() {
        // A sleeping loop holds the backend: wake it so that it lets go.
        let unwatchable = backendAccess.withLockWakingLoop({ sleep.wake() }) { access in
            syncRegistrations(access, for: nil)
        }
        invalidate(unwatchable)
    }

    /// Brings the backend's registrations in line with the version-1 sources of `mode`, or of
    /// the mode registered now when `mode` is `nil`, if anything changed. Backend lock held.
    ///
    /// - Returns: the sources that cannot be watched, for ``invalidate(_:)`` once no lock is held.
    func syncRegistrations(
        _ access: BackendAccess, for mode: Mode?, mainQueue: Int32?? = .none
    ) -> [DescriptorTable.Unwatchable] {
        guard let backend = access.backend, let mode = mode ?? access.descriptors.mode else { return [] }
        let mainQueue = mainQueue ?? access.descriptors.mainQueue?.descriptor
        let changes: DescriptorTable.Changes? = state.withLock { state in
            guard
                hints.haveDescriptorsChanged() || access.descriptors.mode != mode
                    || access.descriptors.mainQueue?.descriptor != mainQueue
            else { return nil }
            hints.noteDescriptorsSynced()
            let stays = access.descriptors.mode == mode
            return state.modes.update(mode) { modeState in
                defer { modeState.changedDescriptors.removeAll(keepingCapacity: true) }
                guard stays else { return .all(modeState.descriptorSources) }
                return .some(modeState.changedDescriptors.map { ($0, modeState.descriptorSources[$0] ?? []) })
            } ?? .all([:])
        }
        guard let changes else { return [] }
        return access.descriptors.sync(changes, mode: mode, mainQueue: mainQueue, with: backend)
    }

    /// Reports (through ``Loop/logger``, D8) and invalidates sources that cannot be watched,
    /// and reports a main queue that cannot be. No lock may be held.
    func invalidate(_ unwatchable: [DescriptorTable.Unwatchable]) {
        for entry in unwatchable {
            report(entry)
            entry.source?.invalidate()
        }
    }
}
