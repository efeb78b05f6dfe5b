import RunLoopKit
import Testing

/// Faults: a descriptor closed while its source is in a loop, and its number reused by a new
/// descriptor. The new descriptor's events must never reach the old handler; the loop keeps
/// serving its other sources and timers; Core reports the misuse on standard error (a line
/// with "closed" and the descriptor's number) and invalidates the old source.
///
/// Each case runs in a process of its own (the `StressFixture` program, scenarios in
/// `ReuseScenario`), whose standard error the test reads. The number is reused with `dup2`,
/// which closes the old file and puts the new one under the same number in one step.
@Suite("Faults: descriptor closed and reused")
struct DescriptorReuseTests {
    @Test("a new source on the reused number hears its file; the old handler never does", arguments: backends)
    func newSourceOnReusedNumber(_ backend: BackendKind) async throws {
        try checkReport(try await StressFixtureRun.run("reuse-new-source", backend))
    }

    @Test("a number reused behind a registered source: noticed when the loop watches it again", arguments: backends)
    func reusedBehindRegisteredSource(_ backend: BackendKind) async throws {
        try checkReport(try await StressFixtureRun.run("reuse-behind-source", backend))
    }

    /// The program prints the reused number; its standard error must report it as closed.
    private func checkReport(_ run: StressFixtureRun, sourceLocation: SourceLocation = #_sourceLocation) throws {
        run.expectPassed(sourceLocation: sourceLocation)
        let number = try #require(
            run.output.split(separator: "\n").compactMap { $0.split(separator: " ").last.flatMap { Int32($0) } }.first,
            "the program printed no descriptor number: \(run.output)", sourceLocation: sourceLocation)
        let reported = run.errors.split(separator: "\n").contains { line in
            !line.hasPrefix("FAILED") && line.contains("closed")
                && line.split(whereSeparator: { !$0.isNumber }).contains { Int32($0) == number }
        }
        #expect(
            reported, "no line of standard error says descriptor \(number) was closed: \(run.errors)",
            sourceLocation: sourceLocation)
    }
}
