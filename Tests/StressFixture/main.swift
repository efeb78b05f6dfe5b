// A program that runs one stress, fault or teardown scenario in a process of its own, for the
// conformance tests that must own the whole process: to count its open descriptors and its
// memory, to lower its descriptor limit, or to read what Core writes on its standard error.
//
// Usage: StressFixture SCENARIO BACKEND — each failure is a `FAILED` line on standard error;
// the exit status is 0 when there was none, 1 when there was, 70 when the scenario stalled.
import Glibc
import RunLoopKit
import TestSupport

// Descriptors inherited by accident (a pipe the test process made without close-on-exec, open
// while it spawned this one) are not this scenario's: the exhaustion scenarios size the
// descriptor limit by the highest open number (one inherited at 1,000 let 1,000 loops fit, seen
// under a loaded CI run), and every scenario counts what it leaves open. Nothing of this
// process's own is open yet.
for descriptor in DescriptorSnapshot.take().entries.keys where descriptor > 2 { close(descriptor) }

let arguments = CommandLine.arguments
guard arguments.count == 3, let backend = BackendKind(rawValue: arguments[2]) else {
    writeLine("usage: StressFixture SCENARIO BACKEND", to: 2)
    exit(2)
}

let scenarios: [String: (BackendKind) throws -> Void] = [
    "stress": { backend in report("stress on \(backend): \(try StressRun.perform(backend))") },
    "reuse-new-source": ReuseScenario.newSourceOnReusedNumber,
    "reuse-behind-source": ReuseScenario.reusedBehindRegisteredSource,
    "exhaustion": ExhaustionScenario.runOut,
    "exhaustion-partial": ExhaustionScenario.partialCreation,
    "kernel-registrations": RegistrationScenario.removeThenTearDown,
    "teardown": { backend in try TeardownScenario.manyThreads(backend, count: scaled(10_000, minimum: 200)) },
]

guard let scenario = scenarios[arguments[1]] else {
    writeLine("unknown scenario \(arguments[1]); known: \(scenarios.keys.sorted())", to: 2)
    exit(2)
}
do {
    try scenario(backend)
} catch {
    fail("the scenario threw \(error)")
}
exit(failureCount == 0 ? 0 : 1)
