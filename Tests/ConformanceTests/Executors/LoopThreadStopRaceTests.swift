import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// `LoopThread.perform` racing `stop()` (behaviour contract,
/// Sources/Core/RunLoopKit.docc/BehaviourContract.md › L4: Everything else from any thread).
///
/// Window: `perform` reads whether stopping began, then posts; `stop()` posts the block that
/// ends the loop. A post that lands after that block, once the loop has ended, is dropped at
/// teardown (or refused by the closed queue). In each round three posters call `perform` as
/// fast as they can, alternating `waitUntilDone: true` and `false`, until it returns false,
/// while the round's own thread calls `stop()` once all three are posting.
///
/// Catches: a waiting `perform` whose block was dropped (its caller waits forever: the poster
/// misses its deadline, and the round names it), and a `perform` that said true for a block
/// that never ran, or false for one that did.
@Suite("LoopThread: perform racing stop")
struct LoopThreadStopRaceTests {
    @Test(
        "perform racing stop() always answers: true only for a block that ran, false only for one that never does",
        arguments: backends)
    func performRacingStop(_ backend: BackendKind) async throws {
        let rounds = scaled(400, minimum: 40)
        let outcome = try await offThePool { try StopRace(backend: backend).run(rounds: rounds) }
        #expect(outcome.stuckRound == nil, "round \(outcome.stuckRound ?? 0): a perform never returned")
        #expect(outcome.violations.isEmpty, "\(outcome.violations.prefix(5))")
        // The race was played: every poster was refused in every round that finished.
        #expect(outcome.refusals == 3 * outcome.roundsPlayed)
        #expect(outcome.roundsPlayed == rounds || outcome.stuckRound != nil)
    }
}

/// One run of ``LoopThreadStopRaceTests``.
private struct StopRace {
    let backend: BackendKind

    struct Outcome: Sendable {
        var stuckRound: Int?
        var violations: [String] = []
        var refusals = 0
        var roundsPlayed = 0
    }

    /// One `perform` call: its block's flag, whether it waited, what it answered, and whether
    /// its block had run when it returned.
    typealias Answer = (ran: RanFlag, waited: Bool, accepted: Bool, ranBeforeReturn: Bool)

    func run(rounds: Int) throws -> Outcome {
        var outcome = Outcome()
        for round in 1...rounds {
            let worker = try LoopThread(name: "stop-race", backend: backend)
            let posting = Atomic<Int>(0)
            let everyonePosting = Latch()
            let answers = Lock<[Answer]>([])
            var posters: [TestThread] = []
            for poster in 0..<3 {
                posters.append(
                    try TestThread {
                        var mine: [Answer] = []
                        var waits = poster % 2 == 0
                        while true {
                            let ran = RanFlag()
                            let accepted = worker.perform(waitUntilDone: waits) { ran.set() }
                            mine.append((ran, waits, accepted, ran.isSet))
                            if mine.count == 1, posting.add(1, ordering: .acquiringAndReleasing).newValue == 3 {
                                everyonePosting.open()
                            }
                            guard accepted else { break }
                            waits.toggle()
                        }
                        answers.withLock { $0 += mine }
                    })
            }
            // Every fourth round stops at once; the others once every poster is in its loop.
            if round % 4 != 0, !everyonePosting.wait() {
                outcome.violations.append("round \(round): the posters never all posted")
            }
            worker.stop()
            for poster in posters where !poster.join() {
                outcome.stuckRound = round
                return outcome
            }
            // stop() has joined the loop's thread: every block that will ever run has run.
            for (ran, waited, accepted, ranBeforeReturn) in answers.withLock({ $0 }) {
                let kind = waited ? "perform(waitUntilDone: true)" : "perform(waitUntilDone: false)"
                if waited, accepted, !ranBeforeReturn {
                    outcome.violations.append("\(kind) said true before its block ran")
                }
                if accepted, !ran.isSet { outcome.violations.append("\(kind) said true; its block never ran") }
                if !accepted, ran.isSet { outcome.violations.append("\(kind) said false; its block ran") }
                if !accepted { outcome.refusals += 1 }
            }
            outcome.roundsPlayed += 1
        }
        return outcome
    }
}

/// Whether a block ran; set on the loop's thread, read by its poster.
private final class RanFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .releasing) }

    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// `stop()` while a block posted before it runs a nested run of the loop (behaviour contract,
/// Sources/Core/RunLoopKit.docc/BehaviourContract.md › E2: Worker threads).
///
/// The nested run drains the block that ends the loop. Before the fix that block stopped only
/// the innermost run: the outer run, kept alive by the thread's keep-alive source, slept for
/// good and `stop()` never returned.
extension LoopThreadStopRaceTests {
    @Test("stop() returns when the block that ends the loop is drained by a nested run", arguments: backends)
    func stopDrainedByNestedRun(_ backend: BackendKind) async throws {
        let trace = Trace()
        let stopped = try await offThePool {
            let worker = try LoopThread(name: "nested-stop", backend: backend)
            let nesting = Latch()
            worker.perform {
                nesting.open()
                trace("nested: \(worker.loop.run(.default, timeout: generousDeadline))")
            }
            if !nesting.wait() { trace("the block never ran") }
            let returned = Latch()
            _ = try TestThread {
                worker.stop()
                returned.open()
            }
            return returned.wait()
        }
        #expect(stopped, "stop() did not return")
        #expect(trace.all == ["nested: stopped"])
    }
}
