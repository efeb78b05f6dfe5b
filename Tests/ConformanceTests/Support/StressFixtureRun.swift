import RunLoopKit
import TestSupport
import Testing

/// One run of the `StressFixture` program (built next to the test bundle): a scenario in a
/// process of its own, for the tests that must own the whole process.
struct StressFixtureRun: Sendable {
    /// The exit status, or `nil` when the program was killed for taking longer than its limit.
    let status: Int32?
    let output: String
    let errors: String

    /// Runs `StressFixture SCENARIO BACKEND` with this process's environment (so
    /// `RUNLOOPKIT_STRESS_SCALE` reaches it), killing it after `limit`.
    ///
    /// The scenarios have watchdogs of their own that end them after ``generousDeadline``
    /// without progress; `limit` only guards against a program that hangs anyway.
    static func run(
        _ scenario: String, _ backend: BackendKind, limit: Duration = .seconds(900)
    ) async throws -> StressFixtureRun {
        let child = try await ChildProgram.run("StressFixture", [scenario, backend.rawValue], limit: limit)
        return StressFixtureRun(status: child.timedOut ? nil : child.status, output: child.output, errors: child.errors)
    }

    /// The program's `FAILED` lines, one per failure it saw.
    var failures: [String] { errors.split(separator: "\n").filter { $0.hasPrefix("FAILED") }.map(String.init) }

    /// Records one issue per failure the program reported, and its whole standard error when
    /// it did not exit normally (a crash, a stall, a sanitizer's report).
    func expectPassed(sourceLocation: SourceLocation = #_sourceLocation) {
        for failure in failures { Issue.record(Comment(rawValue: failure), sourceLocation: sourceLocation) }
        guard status != 0 else { return }
        if status == 1, !failures.isEmpty { return }
        let why = status.map { "exited with status \($0)" } ?? "was killed after its time limit"
        let lastOutput = output.split(separator: "\n").suffix(5).joined(separator: "\n")
        Issue.record(
            Comment(
                rawValue:
                    "StressFixture \(why); standard error:\n\(errors)\nlast lines of standard output:\n\(lastOutput)"),
            sourceLocation: sourceLocation)
    }
}
