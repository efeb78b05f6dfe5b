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

/// A loop's thread did not finish within ``generousDeadline``.
struct LoopThreadTimedOut: Error {}

/// Whether `result` is a failure with `error`.
func failed<T>(_ result: Result<T, any Error>, with error: EventLoopError) -> Bool {
    guard case let .failure(failure) = result, let failure = failure as? EventLoopError else { return false }
    return failure == error
}

/// Runs `body` on a new thread that owns a new loop of `backend`, joins the thread (so the
/// loop has been torn down when this returns) and returns the body's result.
func onOwnLoop<T: Sendable>(_ backend: BackendKind, _ body: @escaping @Sendable (Loop) throws -> T) throws -> T {
    let result = Lock<Result<T, any Error>?>(nil)
    let thread = try JoinableThread {
        result.withLock { $0 = Result { try body(try Loop.current(backend: backend)) } }
    }
    guard thread.join() else {
        Issue.record("the loop's thread did not finish within \(generousDeadline)")
        throw LoopThreadTimedOut()
    }
    return try result.withLock { $0! }.get()
}

/// Whether the calling thread is `loop`'s own.
func isOnThread(of loop: Loop) -> Bool { Loop.currentIfCreated === loop }
