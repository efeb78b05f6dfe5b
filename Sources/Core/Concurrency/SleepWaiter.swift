/// The continuation of a sleep, resumed once: by the timer, by cancellation, or, when the loop
/// drops the timer unfired (torn down), by its own `deinit` with ``LoopEndedError``.
final class SleepWaiter: Sendable {
    private let continuation: Lock<CheckedContinuation<Void, any Error>?>
    private let loop: String

    init(_ continuation: CheckedContinuation<Void, any Error>, loop: Loop) {
        self.continuation = Lock(continuation)
        self.loop = loop.description
    }

    func resume(with result: Result<Void, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }

    deinit {
        continuation.withLock { $0.take() }?.resume(throwing: LoopEndedError(loop: loop))
    }
}
