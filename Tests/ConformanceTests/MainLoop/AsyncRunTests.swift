import RunLoopKit
import TestSupport
import Testing

/// `Loop.main.run { async body }` ends cleanly: stopped before the body finishes, it cancels
/// the body's task and serves the loop until the task ends; a body's error propagates. Run in
/// a child process whose main thread runs the main loop (see MainLoopFixture).
@Suite("Main loop: run with an async body")
struct AsyncRunTests {
    /// What the fixture prints for each scenario: a stop before the body finishes cancels its
    /// task, and the loop serves it until it ends; a body that lets the cancellation propagate
    /// makes the run throw it; a body's error propagates out of the run.
    static let printed: [String: [String]] = [
        "async-stopped": ["body started", "body cancelled: true", "cleanup served: true", "body ended", "value 7"],
        "async-stopped-throws": ["body ended", "threw CancellationError: true"],
        "async-throws": ["body ended", "threw Boom: true"],
    ]

    @Test(
        "a stop before the body finishes cancels its task, served until it ends; a cancellation or an error the body throws propagates out of the run",
        arguments: backends, printed.keys.sorted())
    func asyncBodyEnds(_ backend: BackendKind, _ scenario: String) async throws {
        #expect(try await runMainLoopFixture(backend, scenario) == Self.printed[scenario])
    }
}
