import RunLoopCore

/// Runs `body` on a new thread and returns (or throws) what it did, once the thread has
/// exited — after its thread-specific destructors ran, so after any loop it made was torn
/// down and its backend released.
///
/// A check runs on a thread of its own because a loop belongs to the thread that makes it,
/// for the thread's whole life: the caller's thread (a test framework's) must not get one.
/// A body still running after `limit` has hung (a wait that never returns): this throws a
/// ``Mismatch`` and leaves the thread behind.
func onOwnThread(limit: Duration, _ body: @escaping @Sendable () throws -> Void) throws {
    let outcome = Lock<Result<Void, any Error>?>(nil)
    let finished = Gate()
    let thread = try PThread.spawn(name: "conformance") {
        let result = Result { try body() }
        outcome.withLock { $0 = result }
        finished.open()
    }
    guard finished.wait(for: limit) else {
        thread.detach()
        throw Mismatch(
            expected: "the check to finish within \(limit)",
            observed: "it was still running (blocked in the backend?); its thread is left behind")
    }
    thread.join()
    try outcome.withLock { $0! }.get()
}

/// Starts a second thread for a check (a poster, a waker); join it with ``Helper/join(within:)``.
/// Package-wide: the test targets' `TestThread` is one.
package final class Helper: Sendable {
    private let thread: PThread
    /// Opened when the body returned (the thread's teardown follows at once).
    package let finished = Gate()

    package init(name: String = "conformance-2", _ body: @escaping @Sendable () -> Void) throws {
        let finished = self.finished
        thread = try PThread.spawn(name: name) {
            body()
            finished.open()
        }
    }

    /// Lets the thread end by itself, never joined (for a helper nobody will join).
    package func detach() { thread.detach() }

    /// Waits until the body returned, then joins the thread; false (and the thread is left
    /// behind) when that took longer than `limit`.
    @discardableResult
    package func join(within limit: Duration) -> Bool {
        guard finished.wait(for: limit) else {
            thread.detach()
            return false
        }
        thread.join()
        return true
    }
}
