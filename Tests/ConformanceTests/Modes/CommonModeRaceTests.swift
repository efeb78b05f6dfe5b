import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// `addCommonMode` racing a run nested in a block as it decides to sleep (behaviour contract,
/// Sources/Core/RunLoopKit.docc/BehaviourContract.md › M5: A mode made common later; B4:
/// Blocks and nested runs; C2: No lost wakeups).
///
/// Window: the nested run publishes, under the loop's lock as it decides to sleep, whether the
/// outer drain's batch holds a block for the common modes; `addCommonMode` reads that under
/// the same lock to decide whether to wake it. In each round the outer drain takes B1 and B2;
/// B1 runs a nested run in a fresh mode that is not common, and B2, for the common modes,
/// stops that run once it runs there. Another thread makes the mode common at a swept moment:
/// before the nested run starts, during its first pass, as it decides to sleep, or once it
/// sleeps.
///
/// Catches: the flag published outside the lock, or not at all, or read without it: the nested
/// run sleeps with B2 runnable, ends `timedOut` after ``generousDeadline``, and the round is
/// named.
@Suite("Common modes racing a nested run's sleep")
struct CommonModeRaceTests {
    @Test(
        "a mode made common at any moment of a nested run's sleep decision wakes it for the blocks the outer drain holds",
        arguments: backends)
    func addCommonModeRacesNestedSleep(_ backend: BackendKind) async throws {
        let rounds = scaled(1_000, minimum: 100)
        // A thread of its own with no overall deadline: each round has its own (the nested
        // run's timeout), so that a stuck round is named rather than the whole test timed out.
        let failures = try await offThePool {
            let loop = try Loop.current(backend: backend)
            var failures: [String] = []
            for round in 0..<rounds {
                let mode = Loop.Mode("common-race-\(round)")
                let keepAlive = try Loop.Timer(after: .seconds(3600)) { _ in }
                loop.add(keepAlive, to: mode)
                let nestedBegins = Latch()
                let poster = try TestThread {
                    _ = nestedBegins.wait()
                    switch round % 4 {
                    case 0: guard spinUntilWaiting(loop) else { return loop.stop() }
                    case 1: break
                    default:
                        // A swept short delay: lands anywhere in the nested run's first pass.
                        var spins = (round * 37) % 3_000
                        while spins > 0 {
                            spins -= 1
                            atomicMemoryFence(ordering: .relaxed)
                        }
                    }
                    loop.addCommonMode(mode)
                }
                let outcome = Lock<(nested: Loop.RunResult?, b2RanIn: Loop.Mode?)>((nil, nil))
                loop.perform {
                    nestedBegins.open()
                    let result = loop.run(mode, timeout: generousDeadline)
                    outcome.withLock { $0.nested = result }
                }
                loop.perform {
                    outcome.withLock { $0.b2RanIn = loop.currentMode }
                    loop.stop()
                }
                _ = loop.run(timeout: .zero)
                keepAlive.invalidate()
                if !poster.join() { failures.append("round \(round): the poster never returned") }
                let (nested, ranIn) = outcome.withLock { $0 }
                if nested != .stopped || ranIn != mode {
                    failures.append(
                        "round \(round): nested run \(nested.map { "\($0)" } ?? "never ended"), B2 ran in \(ranIn.map { "\($0)" } ?? "no mode")"
                    )
                    break
                }
            }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
