import RunLoopCore

/// A backend on virtual time that moves by itself: a wait with a timeout that finds nothing
/// ready moves the loop's time to its end at once instead of sleeping. A wait without a timeout
/// waits for real, so other threads' blocks, signals and descriptors end it as on any loop.
///
/// For a loop run by the thread that owns it, as the conformance suite runs its loops: the
/// loop's own runs and timers play out in virtual time, in the contract's order, with no test
/// thread to move time. What another thread does "while the loop sleeps until a deadline"
/// cannot happen on it: such a sleep takes no real time.
final class AutoAdvancingBackend: Backend {
    private let inner: any Backend
    private let time: SelfAdvancingTime

    init(wrapping inner: any Backend, time: SelfAdvancingTime) {
        self.inner = inner
        self.time = time
    }

    var kind: BackendKind { inner.kind }
    var waker: any BackendWaker { inner.waker }

    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        try inner.register(descriptor, token: token, interest: interest)
    }

    func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        try inner.unregister(descriptor, token: token)
    }

    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        guard let timeout else {
            try inner.wait(timeout: nil, into: &events)
            return
        }
        // What is ready, and a wake posted, is served first, as a real wait returns with it
        // before its timeout; a wake posted after this poll stays pending for the next wait.
        try inner.wait(timeout: .zero, into: &events)
        guard events.isEmpty, timeout > .zero else { return }
        // Nothing came: the whole timeout passes. Core, back empty-handed, reads the clock and
        // finds what is due at its end (rule C3).
        time.pass(timeout)
    }

    /// A host's wait would take real time: such a loop cannot be embedded.
    var embedding: EmbeddingSupport {
        .unsupported(reason: "a loop on self-advancing virtual time cannot wait in a host's loop")
    }

    var ownSources: OwnSourceServing { inner.ownSources }
}
