import RunLoopKit
import TestSupport

/// Runs `body` with `worker`, a new `LoopThread` (the loop a test's async code posts to, submits
/// to or sleeps on), and stops it when `body` returns.
@discardableResult
func withWorker<T>(_ worker: LoopThread, _ body: (LoopThread) async throws -> T) async rethrows -> T {
    defer { worker.stop() }
    return try await body(worker)
}

/// A new loop of `backend` for the calling thread (a ``TestThread`` of the test's), or nil, with
/// why in `failure`, when it could not be made.
func newLoop(_ backend: BackendKind, failure: Ref<String>) -> Loop? {
    do {
        return try Loop.current(backend: backend)
    } catch {
        failure.value = "the loop could not be created: \(error)"
        return nil
    }
}
