import NIOCore
import RunLoopKit
import RunLoopKitNIO
import TestSupport
import Testing

/// The backends of this build that can start here: each test runs once per backend.
let adapterBackends: [BackendKind] = startableBackends

/// Waits (blocking this thread, without spinning) until `future` completes, failing the test
/// after ``generousDeadline``.
///
/// - Throws: ``FutureTimedOut`` when the future is still pending at the deadline.
func outcome<T: Sendable>(
    of future: EventLoopFuture<T>, sourceLocation: SourceLocation = #_sourceLocation
) throws -> Result<T, any Error> {
    let result = Lock<Result<T, any Error>?>(nil)
    let done = Latch()
    future.whenComplete { outcome in
        result.withLock { $0 = outcome }
        done.open()
    }
    guard done.wait(for: generousDeadline) else {
        Issue.record("the future did not complete within \(generousDeadline)", sourceLocation: sourceLocation)
        throw FutureTimedOut()
    }
    return result.withLock { $0! }
}

/// The future's value, waited for as ``outcome(of:sourceLocation:)`` does; rethrows its error.
func value<T: Sendable>(of future: EventLoopFuture<T>, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
    try outcome(of: future, sourceLocation: sourceLocation).get()
}

/// A future did not complete within ``generousDeadline``.
struct FutureTimedOut: Error {}

/// Whether `result` is a failure with `error`.
func failed<T>(_ result: Result<T, any Error>, with error: EventLoopError) -> Bool {
    guard case let .failure(failure) = result, let failure = failure as? EventLoopError else { return false }
    return failure == error
}

/// Whether the calling thread is `loop`'s own.
func isOnThread(of loop: Loop) -> Bool { Loop.currentIfCreated === loop }

/// Runs `body` off the cooperative pool (``offThePool(within:fileID:line:_:)``) with a new
/// worker `LoopThread` of `backend` and its event loop; the worker is stopped when `body`
/// returns.
func withWorker<T: Sendable>(
    _ backend: BackendKind, fileID: String = #fileID, line: Int = #line,
    _ body: sending @escaping (LoopThread, LoopEventLoop) throws -> T
) async throws -> T {
    try await offThePool(fileID: fileID, line: line) {
        let worker = try LoopThread(backend: backend)
        defer { worker.stop() }
        return try body(worker, worker.loop.eventLoop)
    }
}
