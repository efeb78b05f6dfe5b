import RunLoopKit
import TestSupport
import Testing

/// Awaits `operation`, failing the test if it has not finished within `deadline`.
///
/// For tests of async APIs that must never leave their caller waiting: a hang becomes a
/// failure naming the line, not a test run that never ends. The operation runs in a task of
/// its own, which a hang leaves behind (as ``onLoopThread(_:within:fileID:line:_:)`` leaves its
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

/// A wait that did not finish in time, after the issue naming it was recorded.
struct TestTimeout: Error {}
