import RunLoopKit
import Testing

/// Many threads at once against one loop: nothing lost, nothing run twice, order kept, and
/// nothing left behind (behaviour contract, Sources/Core/RunLoopKit.docc/BehaviourContract.md ›
/// L4: Everything else from any thread; B2: FIFO, per mode; D4: Message ports; C2: No lost
/// wakeups).
///
/// Each case runs in a process of its own (the `StressFixture` program): it compares the
/// process's open descriptors before and after, which only a process of its own can do while
/// other tests run in parallel. Its size is `RUNLOOPKIT_STRESS_SCALE` (default 1: 1,000,000
/// blocks per producer).
@Suite("Stress")
struct StressTests {
    @Test(
        "4 producers × 1,000,000 blocks with messages, signals, churn, nested runs, stop and wakeUp: exactly once, in order, nothing left",
        arguments: backends)
    func producersAndChurn(_ backend: BackendKind) async throws {
        let run = try await StressFixtureRun.run("stress", backend)
        run.expectPassed()
        // Everything the run does is legitimate use: Core has nothing to complain about.
        let complaints = run.errors.split(separator: "\n").filter { $0.contains("RunLoopKit") }
        #expect(complaints.isEmpty, "Core reported on standard error: \(complaints)")
        print(run.output, terminator: "")
    }
}
