extension Loop {
    /// Adds `observer` to `mode` (to every common mode for ``Mode/common``).
    ///
    /// An observer belongs to one loop: adding it to a second loop traps with a message, and so
    /// does adding one whose handler is main-actor code to a loop other than `Loop.main`. An
    /// observer added while its activity is being notified misses that notification. Safe to
    /// call from any thread.
    public func add(_ observer: Observer, to mode: Mode) {
        observer.isolation.admit(observer, to: self, by: "Loop.add(_:to:)")
        observer.loop.withLock { binding in
            guard observer.isValid else { return }
            if binding.isBound, let owner = binding.loop.loop, owner !== self {
                trap(
                    "Loop.add(_:to:): \(observer) already belongs to \(owner); an observer can be added to one loop only"
                )
            }
            binding = (WeakLoop(loop: self), true)
            hints.noteObserversExist()
            state.withLock { state in
                guard !state.isTornDown else { return }
                if mode == .common { state.commonObservers.insert(observer) }
                hints.noteObserversChanged()
                for target in state.targets(of: mode) {
                    state.modes[target, default: ModeState()].insertObserver(observer)
                }
            }
        }
    }

    /// Removes `observer` from `mode` (from every common mode for ``Mode/common``).
    ///
    /// Safe to call from any thread.
    public func remove(_ observer: Observer, from mode: Mode) {
        state.withLock { state in
            if mode == .common { state.commonObservers.remove(observer) }
            hints.noteObserversChanged()
            for target in state.targets(of: mode) { state.modes[target]?.observers.removeAll { $0 === observer } }
        }
    }

    /// Whether `observer` is in `mode` (for ``Mode/common``: was added to the common modes).
    ///
    /// Safe to call from any thread.
    public func contains(_ observer: Observer, in mode: Mode) -> Bool {
        state.withLock { state in
            mode == .common
                ? state.commonObservers.contains(observer)
                : state.modes.read(mode) { $0.observers.contains(observer) } == true
        }
    }

    /// Removes an invalidated observer from every mode.
    func detach(_ observer: Observer) {
        state.withLock { state in
            state.commonObservers.remove(observer)
            hints.noteObserversChanged()
            state.modes.updateEach { $0.observers.removeAll { $0 === observer } }
        }
    }
}
