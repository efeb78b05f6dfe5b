/// A one-shot signal that tasks await: how ``LoopThread/finish()`` waits for a thread's end
/// without holding a thread. Signalled once; waiters before and after it all resume.
final class ThreadEndSignal: Sendable {
    private enum State {
        case waiting([UnsafeContinuation<Void, Never>])
        case signalled
    }

    private let state = Lock<State>(.waiting([]))

    /// Resumes every waiter, and every later one at once. Later calls have no effect. Safe from
    /// any thread.
    func signal() {
        let waiters: [UnsafeContinuation<Void, Never>] = state.withLock { state in
            guard case let .waiting(waiters) = state else { return [] }
            state = .signalled
            return waiters
        }
        // Resumed outside the lock: a resumed task may run at once on this thread.
        for waiter in waiters { waiter.resume() }
    }

    /// Whether ``signal()`` was called.
    var isSignalled: Bool {
        state.withLock { state in
            if case .signalled = state { return true }
            return false
        }
    }

    /// Returns once ``signal()`` was called; suspends (holding no thread) until then.
    /// Cancellation does not end the wait: the thread's end is what it waits for.
    func wait() async {
        if isSignalled { return }
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let resumeNow: Bool = state.withLock { state in
                guard case var .waiting(waiters) = state else { return true }
                waiters.append(continuation)
                state = .waiting(waiters)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
