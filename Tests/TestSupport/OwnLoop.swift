import RunLoopKit

/// The thread a test gave a loop of its own did not finish within ``generousDeadline``.
public struct LoopThreadTimedOut: Error, CustomStringConvertible {
    public init() {}
    public var description: String { "the loop's thread did not finish within \(generousDeadline)" }
}

/// Runs `body` on a new thread that owns a new loop of `backend`, joins the thread (so the
/// loop has been torn down when this returns) and returns the body's result; throws
/// ``LoopThreadTimedOut`` when the thread does not finish, and whatever `body` or the loop's
/// creation threw.
public func onOwnLoop<T: Sendable>(
    _ backend: BackendKind, _ body: @escaping @Sendable (Loop) throws -> T
) throws -> T {
    let outcome = Lock<Result<T, any Error>?>(nil)
    let thread = try JoinableThread {
        outcome.withLock { $0 = Result { try body(try Loop.current(backend: backend)) } }
    }
    guard thread.join() else { throw LoopThreadTimedOut() }
    return try outcome.withLock { $0! }.get()
}
