import Dispatch
import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Runs `body` on a new thread that owns a new loop of `backend`, and returns its result.
///
/// Each test owns its thread and its loop; the loop is torn down when the thread exits. If the
/// body does not finish within ``generousDeadline`` the test fails (the thread is left behind).
func onLoopThread<T: Sendable>(
    _ backend: BackendKind,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable (Loop) throws -> T
) async throws -> T {
    // At most one loop thread per CPU at once, as when this waited on a cooperative thread:
    // hundreds of tests start together, and their loops all running at once would starve the
    // timing-sensitive ones (a timer under a signal storm, the stall monitor).
    try await withOffPoolSlot { try await onNewLoopThread(backend, sourceLocation: sourceLocation, body) }
}

private func onNewLoopThread<T: Sendable>(
    _ backend: BackendKind,
    sourceLocation: SourceLocation,
    _ body: @escaping @Sendable (Loop) throws -> T
) async throws -> T {
    let outcome = Lock<Result<T, any Error>?>(nil)
    let done = Latch()
    try spawnThread {
        do {
            let loop = try Loop.current(backend: backend)
            let value = try body(loop)
            outcome.withLock { $0 = .success(value) }
        } catch {
            outcome.withLock { $0 = .failure(error) }
        }
        done.open()
    }
    guard await done.waitOffPool(for: generousDeadline) else {
        Issue.record("the loop thread did not finish within \(generousDeadline)", sourceLocation: sourceLocation)
        throw TestTimeout()
    }
    return try outcome.withLock { $0! }.get()
}

struct TestTimeout: Error {}
