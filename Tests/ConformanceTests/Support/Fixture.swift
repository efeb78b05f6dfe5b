import RunLoopKit

/// Runs `MainLoopFixture BACKEND SCENARIO` (built next to the test bundle) and returns the
/// lines it printed; the fixture's own main thread runs the main loop. A run that does not end
/// normally ends with a line saying how, and what it wrote to standard error.
func runMainLoopFixture(_ backend: BackendKind, _ scenario: String) async throws -> [String] {
    let run = try await ChildProgram.run("MainLoopFixture", [backend.rawValue, scenario])
    guard run.status != 0 || run.crashed else { return run.lines }
    let how =
        run.timedOut
        ? "killed after its time limit" : run.crashed ? "signal \(run.status)" : "exit status \(run.status)"
    return run.lines + ["\(how); standard error: \(run.errors)"]
}
