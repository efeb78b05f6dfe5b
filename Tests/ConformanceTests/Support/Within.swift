import RunLoopKit
import TestSupport
import Testing

/// Awaits `operation`, failing the test if it has not finished within `deadline`.
///
/// For tests of async APIs that must never leave their caller waiting: a hang becomes a
/// failure naming the line, not a test run that never ends. The operation runs in a task of
/// its own, which a hang leaves behind (as ``onLoopThread(_:sourceLocation:_:)`` leaves its
/// thread).
func within<T: Sendable>(
    _ deadline: Duration = generousDeadline,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = OneShot<Result<T, any Error>>()
    let work = Task {
        do { outcome.deliver(.success(try await operation())) } catch { outcome.deliver(.failure(error)) }
    }
    let timer = Task {
        try? await Task.sleep(for: deadline)
        outcome.deliver(.failure(TestTimeout()))
    }
    let result = await outcome.value
    timer.cancel()
    if case .failure(let error) = result, error is TestTimeout {
        work.cancel()
        Issue.record("not finished within \(deadline)", sourceLocation: sourceLocation)
    }
    return try result.get()
}

/// A value delivered once, from any thread, to one awaiting task.
final class OneShot<Value: Sendable>: Sendable {
    private let state = Lock<(value: Value?, waiter: CheckedContinuation<Value, Never>?)>((nil, nil))

    /// Delivers `value`; later deliveries are ignored.
    func deliver(_ value: Value) {
        let waiter: CheckedContinuation<Value, Never>? = state.withLock { state in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    /// The delivered value, once it is.
    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let now: Value? = state.withLock { state in
                    if let value = state.value { return value }
                    state.waiter = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        }
    }
}

/// A gate async code waits at until someone opens it, from any thread.
final class AsyncGate: Sendable {
    private let shot = OneShot<Void>()

    /// Opens the gate; later calls have no effect.
    func open() { shot.deliver(()) }

    /// Returns once the gate is open, failing the test after `deadline`.
    func wait(_ deadline: Duration = generousDeadline, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let shot = shot
        try await within(deadline, sourceLocation: sourceLocation) { await shot.value }
    }
}
