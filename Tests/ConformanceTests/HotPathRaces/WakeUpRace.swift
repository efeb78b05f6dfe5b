import RunLoopKit
import TestSupport
import Testing

// Hunts the window of `wakeRequested` (`PassHints`): a `wakeUp()` deciding between ending a
// sleep and leaving a pending wake while the loop consumes the flag and publishes that it sleeps.
// Guards [W2] (waking a sleeping loop: one wake, one pass) and [C2] (no lost wakeups),
// Sources/Core/RunLoopKit.docc/BehaviourContract.md.

extension HotPathRaceTests {
    /// Window: `wakeUp()` decides under the loop's lock between ending a sleep (the loop
    /// published it sleeps) and leaving a pending wake (`wakeRequested`) for the next wait to
    /// consume, while the loop consumes that flag and publishes its sleep under the same lock.
    /// The loop runs `.default` with an hour's timeout and no source, only a timer an hour away
    /// (no descriptor: nothing but the wake can end a sleep). A poster calls `wakeUp()` at
    /// every moment of the pass and waits for an `afterWaiting` that follows it; when it saw the
    /// loop asleep first, that wake makes exactly one pass (the loop is asleep again after one
    /// `afterWaiting`).
    ///
    /// Catches: a wake lost between the loop's look at `wakeRequested` and its sleep (the flag
    /// consumed outside the lock, or `wakeUp()` checking `isAsleep` outside it): the loop
    /// sleeps for the hour and the poster's deadline passes. A wake that both ends a sleep and
    /// stays pending, or a wake posted for an earlier sleep that is not absorbed, makes a
    /// second pass (recorded), or a spurious wakeup.
    @Test(
        "wakeRequested: every wakeUp, at any moment of the pass, is followed by a pass; one made while the loop sleeps makes exactly one",
        arguments: backends)
    func wakeUpRacesTheDecisionToSleep(_ backend: BackendKind) async throws {
        let rounds = scaled(20_000, minimum: 300)
        let outcome = try await offThePool { try WakeUpRace(backend: backend).run(rounds: rounds) }
        #expect(
            outcome.missed == nil,
            "round \(outcome.missed ?? 0) of \(rounds): no pass followed the wakeUp (a lost wake)")
        #expect(outcome.violations.isEmpty, "\(outcome.violationCount) violations, the first: \(outcome.violations)")
        #expect(
            outcome.exactRounds > 0, "no round saw the loop asleep before its wakeUp: the exact-pass check never ran")
        #expect(
            outcome.result == .stopped,
            "the run ended with \(outcome.result.map { "\($0)" } ?? "nothing"), not by the stop")
        expectClean(outcome.report)
        #expect(outcome.report?.statistics.wakeups[.timeout] == 0)
    }
}

private struct WakeUpRace {
    struct Outcome: Sendable {
        var missed: Int?
        var violations: [String] = []
        var violationCount = 0
        /// Rounds that saw the loop asleep before the wakeUp (and checked for exactly one pass).
        var exactRounds = 0
        var result: Loop.RunResult?
        var report: HotPathLoop.Report?
    }

    let backend: BackendKind

    func run(rounds: Int) throws -> Outcome {
        let afterWaiting = AtomicInt()
        let beacon = HotPathBeacon()
        let result = Ref<Loop.RunResult>()
        let host = try HotPathLoop(
            backend,
            prepare: { loop in
                // An hour away: it keeps the mode alive without a source, and never fires.
                let timer = try Loop.Timer(after: .seconds(3600)) { _ in }
                loop.add(timer, to: .default)
                let observer = Loop.Observer(activities: .afterWaiting) { _, _ in
                    afterWaiting.increment()
                    beacon.ping()
                }
                loop.add(observer, to: .default)
                return {
                    timer.invalidate()
                    observer.invalidate()
                }
            },
            run: { loop in
                result.value = loop.run(.default, timeout: .seconds(3600))
            })
        let loop = host.loop
        let violations = Violations()
        var outcome = Outcome()
        var random = SeededRandom(0x3A4E_0001)
        // One round more when no random moment found the loop asleep (a loaded machine, a slow
        // backend's pass): it waits for the sleep, so the exact-pass check always runs.
        for round in 0...rounds {
            let isExtra = round == rounds
            if isExtra, outcome.exactRounds > 0 { break }
            let sawAsleep =
                isExtra
                ? hotPathWait(until: { loop.isWaiting }) : HotPathMoment(&random).pause(loop, spinningOn: afterWaiting)
            let before = afterWaiting.value
            loop.wakeUp()
            guard beacon.wait(spinning: random.below(2) * 4_000, until: { afterWaiting.value > before }) else {
                outcome.missed = round
                break
            }
            guard sawAsleep else { continue }
            // Asleep, and nothing else wakes it: this wake ends that sleep, makes one pass,
            // and leaves nothing pending — the loop sleeps again after exactly one afterWaiting.
            outcome.exactRounds += 1
            guard hotPathWait(until: { loop.isWaiting }) else {
                violations.record("round \(round): the loop did not go back to sleep after its pass")
                continue
            }
            let passes = afterWaiting.value - before
            if passes != 1 { violations.record("round \(round): a wakeUp while the loop slept made \(passes) passes") }
        }
        outcome.report = host.finish()
        outcome.result = result.value
        outcome.violations = violations.first
        outcome.violationCount = violations.count
        return outcome
    }
}
