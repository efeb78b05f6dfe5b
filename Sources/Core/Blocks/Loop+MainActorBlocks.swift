extension Loop {
    /// Queues `block`, main-actor code (written `{ @MainActor in … }`), to run on the main
    /// thread while `Loop.main` runs a common mode.
    ///
    /// Only the main loop runs main-actor code: on any other loop this traps with a message
    /// naming the loop. The block runs with a check, not an assumption, that the main actor's
    /// executor agrees it is on the main actor (`MainActor.assumeIsolated`). A block written
    /// without `@MainActor` goes to ``perform(_:)``, as before. Safe to call from any thread.
    ///
    /// - Parameters:
    ///   - block: the main-actor work.
    ///   - isolation: the block's isolation; leave it out (it tells this overload from
    ///     ``perform(_:)``, whose blocks are nonisolated).
    public func perform(_ block: @escaping @MainActor @Sendable () -> Void, isolation: MainActor = .shared) {
        HandlerIsolation(isolation).admit("a block", to: self, by: "Loop.perform")
        perform { MainActor.assumeIsolated { block() } }
    }

    /// Queues `block`, main-actor code (written `{ @MainActor in … }`), to run on the main
    /// thread while `Loop.main` runs one of `modes`; as ``perform(_:isolation:)`` otherwise.
    ///
    /// - Parameters:
    ///   - modes: where the block may run (see ``perform(in:_:)-(Loop.ModeSet,_)``); must not be
    ///     empty.
    ///   - block: the main-actor work.
    ///   - isolation: the block's isolation; leave it out.
    public func perform(
        in modes: ModeSet, _ block: @escaping @MainActor @Sendable () -> Void, isolation: MainActor = .shared
    ) {
        HandlerIsolation(isolation).admit("a block", to: self, by: "Loop.perform")
        perform(in: modes) { MainActor.assumeIsolated { block() } }
    }
}
