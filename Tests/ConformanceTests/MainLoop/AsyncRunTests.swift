import RunLoopKit
import TestSupport
import Testing

/// `Loop.main.run { async body }` ends cleanly: stopped before the body finishes, it cancels
/// the body's task and serves the loop until the task ends; a body's error propagates. Run in
/// a child process whose main thread runs the main loop (see MainLoopFixture).
@Suite("Main loop: run with an async body")
struct AsyncRunTests {
    @Test("a stop before the body finishes cancels its task, and the loop serves it until it ends", arguments: backends)
    func stopCancelsBody(_ backend: BackendKind) async throws {
        #expect(
            try await runMainLoopFixture(backend, "async-stopped") == [
                "body started", "body cancelled: true", "cleanup served: true", "body ended", "value 7",
            ])
    }

    @Test("a body that lets the cancellation propagate makes the run throw it", arguments: backends)
    func stopThrowsCancellation(_ backend: BackendKind) async throws {
        #expect(
            try await runMainLoopFixture(backend, "async-stopped-throws") == [
                "body ended", "threw CancellationError: true",
            ])
    }

    @Test("a body's error propagates out of the run", arguments: backends)
    func bodyThrows(_ backend: BackendKind) async throws {
        #expect(try await runMainLoopFixture(backend, "async-throws") == ["body ended", "threw Boom: true"])
    }
}
