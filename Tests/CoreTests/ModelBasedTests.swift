import PropertyBased
import TestSupport
import Testing

/// Core against the model, on random programs: every step's events and the state after it
/// must be exactly what the model predicts.
@Suite("Core against a model of the semantics")
struct ModelBasedTests {
    @Test(
        "random programs: Core does what the model predicts, step by step", .shrinking,
        arguments: 0..<ProgramGenerator.shards)
    func randomPrograms(shard: Int) async {
        await propertyCheck(count: ProgramGenerator.programs(inShard: shard), input: ProgramGenerator.generator) {
            program in
            await checkAgainstModel(program)
        }
    }
}

/// How long one program may take on Core before the test gives up on it (a program takes
/// milliseconds; this only catches a loop that never returns).
let programDeadline: Duration = .seconds(60)

/// Runs `program` on Core off Swift's cooperative pool, on a fresh thread (one program per CPU at
/// once, as the timed scenarios need), so that its loop is fresh and torn down when the thread
/// ends; `nil` if it did not finish within ``programDeadline``.
func runOnCore(_ program: Program) async -> Trace? {
    try? await offThePool(within: programDeadline) { CoreHarness.run(program) }
}

/// Runs `program` on Core (``runOnCore(_:)``), then in the model, and records the first
/// difference as an issue.
///
/// The model goes second: where the contract leaves the loop a choice (when, within the
/// tolerance windows, a sleep ends), it checks Core's choice and follows it.
func checkAgainstModel(_ program: Program, sourceLocation: SourceLocation = #_sourceLocation) async {
    guard let actual = await runOnCore(program) else {
        Issue.record(
            "Core did not finish the program within \(programDeadline) (a run that never returns?)",
            sourceLocation: sourceLocation)
        return
    }
    let predicted = Model.predict(program, observed: actual)
    if let report = predicted.divergence(from: actual, program: program) {
        Issue.record("\(report)", sourceLocation: sourceLocation)
    }
}
