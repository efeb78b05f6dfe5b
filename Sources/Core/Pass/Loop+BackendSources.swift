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
        guard let backend = registrar.withBackend({ $0 }) else { return false }
        instruments.enter(.backendSources)
        return backend.dispatchOwnSources()
    }
}
