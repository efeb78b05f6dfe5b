import RunLoopCore

/// A virtual loop's backend: the build's backend, except that a wait with a timeout waits for
/// real until an event or a wake only. The timeout is virtual time, which passes only when
/// the test moves it (and then wakes the loop); the wait tells ``VirtualTime`` when the loop
/// sleeps and until when, which is how an advance knows the next instant to stop at.
final class VirtualTimeBackend: Backend {
    private let inner: any Backend
    private let time: VirtualTime
    let waker: any BackendWaker
    /// The wakes done when the last wait began (only the loop's thread waits).
    private var wakesDoneBeforeLastWait: UInt64 = 0

    init(wrapping inner: any Backend, time: VirtualTime) {
        self.inner = inner
        self.time = time
        waker = Waker(inner: inner.waker, time: time)
    }

    var kind: BackendKind { inner.kind }

    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        try inner.register(descriptor, token: token, interest: interest)
        time.registered(descriptor, for: interest)
    }

    func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        time.unregistered(descriptor)
        try inner.unregister(descriptor, token: token)
    }

    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        // A poll stays a poll: the loop has work now.
        if let timeout, timeout <= .zero {
            try inner.wait(timeout: .zero, into: &events)
            return
        }
        // Polled first: what is ready is served now. The poll also consumes every wake posted
        // before it, which Core counts on to re-check its queues: so the loop sleeps for real
        // only when no wake was done since its last wait began, nor begun since (a wake in
        // between goes back to Core empty-handed, which takes it for a wake and looks again).
        #if DEBUG
        time.beforePoll.withLock { $0 }?()
        #endif
        let mark = wakesDoneBeforeLastWait
        let done = time.wakesDone
        wakesDoneBeforeLastWait = done
        try inner.wait(timeout: .zero, into: &events)
        guard events.isEmpty, done == mark else { return }
        let deadline = timeout.map { time.elapsed.addingSaturating($0.nanosecondsRoundedUp) }
        guard time.willSleep(until: deadline, ifNoWakeSince: done) else { return }
        defer { time.didWake() }
        try inner.wait(timeout: nil, into: &events)
    }

    /// A host's wait would count real time: a virtual loop cannot be embedded.
    var embedding: EmbeddingSupport {
        .unsupported(reason: "a virtual loop's time moves only when its test moves it, not while a host waits")
    }

    var ownSources: OwnSourceServing { inner.ownSources }

    deinit {
        // Released on the loop's thread as it exits: nothing will settle again.
        time.loopDidEnd()
    }

    /// Tells the time a wake was posted, then wakes the loop.
    private struct Waker: BackendWaker {
        let inner: any BackendWaker
        let time: VirtualTime

        func wake() {
            time.wake { inner.wake() }
        }
    }
}
