extension Loop {
    /// Runs the callbacks of the backend's own ready sources (GLib's, on the GLib backend): a
    /// phase of the pass, after the ready descriptors, like the main-queue drain.
    ///
    /// Called without the backend lock (a callback may run this loop nested, which takes it) and
    /// outside every other lock of the loop; published as a phase, so a stall monitor sees a
    /// callback that does not return.
    /// - Returns: whether a callback ran.
    func dispatchBackendSources() -> Bool {
        // The backend outlives this call: it is released on this thread, when it exits.
        guard case let .passPhase(phase)? = registrar.withBackend({ $0.ownSources }) else { return false }
        instruments.enter(.backendSources)
        return phase.dispatchOwnSources()
    }

    /// Calls `body` with the backend's pass-phase object (``OwnSourceServing/passPhase(_:)``),
    /// with the backend lock held; does nothing when the backend serves its own sources some
    /// other way, or none, or is gone.
    func withOwnSourcePhase(_ body: (any OwnSourcePhase) -> Void) {
        guard ownSourcesInPassPhase else { return }
        registrar.withBackend { backend in
            if case let .passPhase(phase) = backend.ownSources { body(phase) }
        }
    }
}
