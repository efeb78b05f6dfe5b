import RunLoopCore

/// The backend under test, unchanged, except that it tells a waiting thread when the loop
/// calls a wait that may sleep: for the wake race's pokes made while the loop sleeps.
///
/// Core calls ``wait(timeout:into:)`` only after its last look for work, so a poke made once
/// the loop is in such a wait can reach the loop only through the backend's waker. Watching
/// the call, not guessing from timing, puts those pokes there however the threads are
/// scheduled.
final class SleepWatchingBackend: Backend, @unchecked Sendable {
    // @unchecked: `waitUntilSleeping`, the one call of the check's own, touches nothing but the
    // lock-guarded state; every other call is forwarded, from the threads Core makes it on and
    // under Core's backend lock, as the inner backend expects.
    private let inner: any Backend
    private struct State {
        /// Whether the loop is in a wait that may sleep (neither a poll nor returned).
        var sleeping = false
        /// Opened, then dropped, when the loop next enters such a wait.
        var waiter: Gate?
    }
    private let state = Lock(State())

    init(_ inner: any Backend) {
        self.inner = inner
    }

    /// A factory of backends made by `factory` (for a main loop too, when it makes those its
    /// own way), each wrapped, with `factory`'s kind; `made` keeps the last one made.
    static func factory(over factory: BackendFactory, keeping made: Lock<SleepWatchingBackend?>) -> BackendFactory {
        @Sendable func wrapped(
            _ make: @escaping @Sendable () throws -> any Backend
        ) -> @Sendable () throws -> any Backend {
            {
                let backend = SleepWatchingBackend(try make())
                made.withLock { $0 = backend }
                return backend
            }
        }
        guard let makeForMainLoop = factory.makeForMainLoop else {
            return BackendFactory(kind: factory.kind, make: wrapped(factory.make))
        }
        return BackendFactory(
            kind: factory.kind, make: wrapped(factory.make), makeForMainLoop: wrapped(makeForMainLoop))
    }

    /// Waits until the loop is in a wait that may sleep (at once if it is already); false if
    /// it did not enter one within `limit`.
    func waitUntilSleeping(for limit: Duration) -> Bool {
        let gate = Gate()
        let sleeping = state.withLock { state in
            if !state.sleeping { state.waiter = gate }
            return state.sleeping
        }
        if sleeping || gate.wait(for: limit) { return true }
        state.withLock { $0.waiter = nil }
        return false
    }

    var kind: BackendKind { inner.kind }
    var waker: any BackendWaker { inner.waker }
    var embedding: EmbeddingSupport { inner.embedding }
    var ownSources: OwnSourceServing { inner.ownSources }

    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        try inner.register(descriptor, token: token, interest: interest)
    }

    func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        try inner.unregister(descriptor, token: token)
    }

    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        let maySleep = timeout.map { $0 > .zero } ?? true
        guard maySleep else { return try inner.wait(timeout: timeout, into: &events) }
        let waiter = state.withLock { state in
            state.sleeping = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.open()
        defer { state.withLock { $0.sleeping = false } }
        try inner.wait(timeout: timeout, into: &events)
    }
}
