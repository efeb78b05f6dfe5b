import RunLoopKit

/// Starts a detached pthread running `body`.
public func spawnThread(_ body: @escaping @Sendable () -> Void) throws {
    _ = try JoinableThread(body, detached: true)
}

/// A pthread that can be joined: joining returns only once the thread has exited, after its
/// thread-specific destructors ran — so after the teardown of the loop it had.
///
/// ``spawnThread(_:)`` detaches its threads; tests that check what a loop's teardown released
/// join instead. Join exactly once.
public final class JoinableThread: Sendable {
    private let thread: Lock<PThread?>
    /// Opened when the body returned (the thread's teardown follows at once).
    public let finished = Latch()

    /// Starts a thread running `body`; a detached one cannot be joined, only waited for
    /// through ``finished``.
    public init(_ body: @escaping @Sendable () -> Void, detached: Bool = false) throws {
        let finished = self.finished
        let thread = try PThread.spawn {
            body()
            finished.open()
        }
        if detached { thread.detach() }
        self.thread = Lock(detached ? nil : thread)
    }

    /// Waits until the body returned (failing after `timeout`), then joins the thread.
    /// - Returns: false if the body did not return in time; the thread is then left running.
    @discardableResult
    public func join(within timeout: Duration = generousDeadline) -> Bool {
        guard finished.wait(for: timeout) else { return false }
        thread.withLock { $0.take() }?.join()
        return true
    }
}
