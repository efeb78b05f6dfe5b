import RunLoopKit
import Testing

/// Faults: the process runs out of descriptors (`RLIMIT_NOFILE` lowered). Creating a loop or a
/// port then fails with a typed error — `BackendError.unavailable` or a `SystemError` with
/// `EMFILE` — and never crashes; a creation that failed half-way leaves nothing open; once
/// everything is released, creating works again.
///
/// Each case runs in a process of its own (the `StressFixture` program, scenarios in
/// `ExhaustionScenario`): a lowered limit would break the tests running in parallel.
@Suite("Faults: descriptor exhaustion")
struct DescriptorExhaustionTests {
    @Test(
        "loops and ports until descriptors run out: typed errors, no crash, no leak, and creating works again",
        arguments: backends)
    func runOut(_ backend: BackendKind) async throws {
        try await StressFixtureRun.run("exhaustion", backend).expectPassed()
    }

    @Test(
        "a loop made with 0 to 8 descriptors left either works or throws a typed error, and leaks nothing",
        arguments: backends)
    func partialCreation(_ backend: BackendKind) async throws {
        try await StressFixtureRun.run("exhaustion-partial", backend).expectPassed()
    }
}
