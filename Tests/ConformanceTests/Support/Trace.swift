import RunLoopKit
import Synchronization
import TestSupport

/// The ordered events a scenario produced, recorded from any thread.
///
/// Tests compare a trace exactly with the events the scenario must produce.
final class Trace: Sendable {
    private let events = Lock<[String]>([])

    /// Appends `event`. Safe from any thread.
    func callAsFunction(_ event: String) {
        events.withLock { $0.append(event) }
    }

    /// The events so far, in order.
    var all: [String] { events.withLock { $0 } }

    /// The number of events so far.
    var count: Int { events.withLock { $0.count } }
}

/// Runs `body` on a new thread that owns a fresh loop of `backend`
/// (``onLoopThread(_:within:fileID:line:_:)``) with a new trace to record into, and returns
/// what it returned with the trace.
func traced<T: Sendable>(
    _ backend: BackendKind, fileID: String = #fileID, line: Int = #line,
    _ body: @escaping @Sendable (Loop, Trace) throws -> T
) async throws -> (T, Trace) {
    let trace = Trace()
    let value = try await onLoopThread(backend, fileID: fileID, line: line) { loop in try body(loop, trace) }
    return (value, trace)
}

/// ``traced(_:fileID:line:_:)`` for a test that sets the loop up in `setUp`, then runs its
/// default mode (for at most ``generousDeadline``): returns how that run ended, and the trace.
func tracedRun(
    _ backend: BackendKind, fileID: String = #fileID, line: Int = #line,
    _ setUp: @escaping @Sendable (Loop, Trace) throws -> Void
) async throws -> (Loop.RunResult, Trace) {
    try await traced(backend, fileID: fileID, line: line) { loop, trace in
        try setUp(loop, trace)
        return loop.run(timeout: generousDeadline)
    }
}
