extension Loop {
    /// Takes the descriptors that no source needs any more out of the backend now, from any
    /// thread, waking the loop if it sleeps holding the backend ([D7]); then reports and
    /// invalidates what cannot be watched.
    func releaseRemovedDescriptors() {
        invalidateUnwatchable(registrar.releaseRemoved(of: self))
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
