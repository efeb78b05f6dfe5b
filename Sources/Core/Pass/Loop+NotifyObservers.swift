extension Loop {
    /// Calls the observers of `mode` watching `activity`, from a snapshot taken now; returns
    /// whether it called any.
    @discardableResult
    func notifyObservers(_ activity: Activity, in mode: Mode) -> Bool {
        guard hints.mayHaveObservers() else { return false }
        // [O2] The observers notified last stand while no observer of any mode changed.
        let version = hints.observersVersionNow()
        if local.observers.mode != mode || local.observers.version != version {
            local.observers = ObserverSnapshot(
                mode: mode, version: version, observers: state.withLock { $0.modes.read(mode) { $0.observers } ?? [] })
        }
        // An activity no observer watches (most of them, for most observers) costs no more.
        guard local.observers.activities.contains(activity) else { return false }
        // Held for the callouts: a run nested in one may replace the snapshot.
        let observers = local.observers.observers
        var called = false
        for observer in observers where observer.activities.contains(activity) {
            // [N2] An observer whose callback is running is not called again from a nested run.
            guard observer.isValid, !observer.isFiring.exchange(true, ordering: .acquiring) else { continue }
            callingOutToObserver(observer, activity)
            called = true
            if !observer.repeats { observer.invalidate() } // [O3]
            observer.isFiring.store(false, ordering: .releasing)
        }
        return called
    }
}
