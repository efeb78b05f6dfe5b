#if DEBUG
/// One of Core's ranked locks, as the code really makes it (debug builds only): the tests of
/// the lock order take these, not locks of their own, so that a rank dropped from, or changed
/// on, one of the real locks fails them.
package enum CoreLockForTesting: String, CaseIterable, Codable, Sendable {
    /// A loop's registrar (rank `backend`).
    case backend
    /// A timer's state (rank `item`).
    case timer
    /// An observer's binding (rank `item`).
    case observer
    /// A source's loop list (rank `item`).
    case source
    /// A loop's state (rank `loopState`).
    case loopState
    /// A loop's queued blocks (rank `blockQueue`).
    case blockQueue
}

extension Loop {
    /// For tests, in debug builds only: what takes `lock` — the loop's own registrar, state or
    /// block-queue lock, or the lock of a timer, observer or source made here, now, as a user
    /// would make one (made before any lock is taken, so that making it takes none of the
    /// locks a test holds) — and runs a body while holding it.
    package func coreLock(_ lock: CoreLockForTesting) -> (_ body: () -> Void) -> Void {
        switch lock {
        case .backend:
            return { body in _ = self.registrar.withBackend { _ in body() } }
        case .timer:
            let timer: Timer
            do { timer = try Timer(after: .seconds(1)) { _ in } } catch {
                trap("RunLoopKit: a one-second timer was refused: \(error)")
            }
            return { body in timer.state.withLock { _ in body() } }
        case .observer:
            let observer = Observer(activities: .entry) { _, _ in }
            return { body in observer.loop.withLock { _ in body() } }
        case .source:
            let source = Source {}
            return { body in source.loops.withLock { _ in body() } }
        case .loopState:
            return { body in self.state.withLock { _ in body() } }
        case .blockQueue:
            return { body in self.blocks.withLockHeld(body) }
        }
    }
}
#endif
