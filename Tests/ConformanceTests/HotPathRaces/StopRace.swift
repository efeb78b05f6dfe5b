import RunLoopKit
import TestSupport
import Testing

// Hunts the window of `stopsRequested` (`PassHints`): a `stop()` from another thread landing
// between a run's recording and its first pass, where the run decides without the loop's lock
// whether it was stopped. Guards [R2] (a stop ends the run it lands in; one made before the
// run's entry check ends it before its first pass) and [C2] (no lost wakeups: a stop of a
// sleeping run wakes it), Sources/Core/RunLoopKit.docc/BehaviourContract.md.

extension HotPathRaceTests {
    /// Window: a run is recorded under the loop's lock, which also reads the count of stops; after
    /// its entry observers it compares the count without the lock, and takes the lock only when
    /// it changed. The loop runs `.default` with an hour's timeout and no source, only a timer
    /// an hour away, again and again; a stopper on another thread waits until each run is
    /// recorded (`currentMode`), then calls `stop()` at a varied moment: at once (during the
    /// entry), after a swept short delay (around the first pass), after a yield, or once the
    /// loop sleeps. Every fourth run's entry observer holds the run until the stopper has
    /// stopped it: that stop lands between the recording and the entry check, so the run must
    /// end without a pass.
    ///
    /// Catches: a stop made before the entry check that the check misses (the count not bumped
    /// by `stop()`, or not compared): the held run makes a pass (recorded). A stop lost for good (a sleeping run not woken): the run sleeps for its hour
    /// and the stopper's deadline passes. A stop that ends a run it was not made in (a changed
    /// count taken for a stop without a look at the run's record): a run returns before its
    /// stop (recorded).
    @Test(
        "stopsRequested: a stop() from another thread at any moment of a run's entry ends that run, and only that one",
        arguments: backends)
    func stopRacesRunEntry(_ backend: BackendKind) async throws {
        let rounds = scaled(20_000, minimum: 300)
        let outcome = try await offThePool { try StopRace(backend: backend).run(rounds: rounds) }
        #expect(outcome.missed == nil, "round \(outcome.missed ?? 0) of \(rounds): the run went on after its stop()")
        #expect(outcome.unstopped == nil, "round \(outcome.unstopped ?? 0): a run returned before its stop()")
        #expect(outcome.roundsRun == rounds)
        #expect(outcome.results == ["stopped": rounds], "how the runs ended: \(outcome.results)")
        #expect(
            outcome.passedAfterHeldStop.isEmpty,
            "runs stopped during their entry that made a pass anyway (rounds): \(outcome.passedAfterHeldStop.prefix(10))"
        )
        #expect(outcome.asleepRounds > 0, "no stop found the loop asleep: the sleeping case never ran")
        expectClean(outcome.report)
    }
}

private struct StopRace {
    struct Outcome: Sendable {
        /// The round whose run did not end after its stop.
        var missed: Int?
        /// The round that found its run returned before its stop was made.
        var unstopped: Int?
        var roundsRun = 0
        /// How the runs ended, by result.
        var results: [String: Int] = [:]
        /// Rounds whose run was stopped while its entry observer held it, and made a pass.
        var passedAfterHeldStop: [Int] = []
        /// Rounds whose stop found the loop asleep.
        var asleepRounds = 0
        var report: HotPathLoop.Report?
    }

    let backend: BackendKind

    /// Whether `round`'s run is held in its entry observer until the stopper stopped it. Not
    /// the first: it runs the block that tells the stopper the loop is ready.
    static func isHeld(_ round: Int) -> Bool { round % 4 == 3 }

    func run(rounds: Int) throws -> Outcome {
        let returned = AtomicInt()
        // Round + 1 of the run held in its entry observer, and of the latest stop made.
        let held = AtomicInt()
        let stopped = AtomicInt()
        let passes = AtomicInt()
        let results = Lock<(byResult: [String: Int], passedAfterHeldStop: [Int])>(([:], []))
        let host = try HotPathLoop(
            backend,
            prepare: { loop in
                // An hour away: it keeps the mode alive without a source, and never fires.
                let timer = try Loop.Timer(after: .seconds(3600)) { _ in }
                loop.add(timer, to: .default)
                // Runs inside the window (after the recording, before the check); a held run waits
                // here for its stop (bounded: a stopper that never comes fails the round anyway).
                let entry = Loop.Observer(activities: .entry) { _, _ in
                    let round = returned.value
                    if StopRace.isHeld(round), round < rounds {
                        held.store(round + 1)
                        _ = hotPathWait { stopped.value > round }
                    }
                }
                // Every pass notifies it first (R3), timers due or not.
                let pass = Loop.Observer(activities: .beforeTimers) { _, _ in _ = passes.increment() }
                loop.add(entry, to: .default)
                loop.add(pass, to: .default)
                return {
                    timer.invalidate()
                    entry.invalidate()
                    pass.invalidate()
                }
            },
            run: { loop in
                while returned.value < rounds {
                    let round = returned.value
                    passes.store(0)
                    let result = loop.run(.default, timeout: .seconds(3600))
                    let passedAfterHeldStop = StopRace.isHeld(round) && passes.value > 0
                    results.withLock {
                        $0.byResult["\(result)", default: 0] += 1
                        if passedAfterHeldStop { $0.passedAfterHeldStop.append(round) }
                    }
                    _ = returned.increment()
                }
            })
        var outcome = Outcome()
        var random = SeededRandom(0x5709)
        for round in 0..<rounds {
            // This round's run is recorded (held in its entry observer, for a held round): the
            // previous one returned (waited for below).
            let recorded = hotPathWait {
                StopRace.isHeld(round) ? held.value == round + 1 : host.loop.currentMode == .default
            }
            guard recorded else {
                outcome.missed = round
                break
            }
            if !StopRace.isHeld(round) {
                // The loop sleeps for an hour unless stopped: waiting for its sleep is an event
                // (a slowed loop, under a sanitizer, may take longer than the moment's own wait).
                let moment = HotPathMoment(&random)
                if case .asleep = moment {
                    if hotPathWait(until: { host.loop.isWaiting }) { outcome.asleepRounds += 1 }
                } else {
                    moment.pause(host.loop, spinningOn: returned)
                }
            }
            guard returned.value == round else {
                outcome.unstopped = round
                break
            }
            host.loop.stop()
            stopped.store(round + 1)
            guard hotPathWait(until: { returned.value > round }) else {
                outcome.missed = round
                break
            }
            outcome.roundsRun = round + 1
        }
        // A round that gave up leaves the loop running: end its runs (each stop ends one).
        let giveUp = ContinuousClock.now + generousDeadline
        while returned.value < rounds, ContinuousClock.now < giveUp {
            stopped.store(rounds)
            host.loop.stop()
            _ = hotPathWait(within: .milliseconds(100)) { returned.value >= rounds }
        }
        outcome.report = host.finish()
        (outcome.results, outcome.passedAfterHeldStop) = results.withLock { ($0.byResult, $0.passedAfterHeldStop) }
        return outcome
    }
}
