import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Timing: a timer added from any thread, at any moment of the pass, fires once due.
///
/// Window: a pass skips its timer step without the loop's lock when no queued timer can be due
/// yet (`TimerBound`, a lower bound of every queued instant, lowered under the lock when a
/// timer is queued and set again from the queues when a step finds nothing due). A poster adds
/// one-shot timers due now or a few microseconds ahead while the loop sleeps, while it is busy
/// in a block (mid-pass), and right after the previous timer fired (as the step that fired it
/// sets the bound again); each must fire before the next is added.
///
/// Catches: a bound set from the queues outside the lock or before a concurrent add's lowering,
/// or not lowered by an add — the loop then either sleeps until a deadline that has passed and
/// then polls forever without firing (its step skipped), or sleeps for good.
@Suite("Timer bound race window")
struct TimerBoundRaceTests {
    @Test(
        "timers added from another thread, asleep, busy or just after a fire, all fire", arguments: backends)
    func timersAddedFromAnotherThreadFire(_ backend: BackendKind) async throws {
        let rounds = scaled(5_000, minimum: 100)
        // On a loaded machine (the whole suite in parallel on two cores) a round can take
        // milliseconds: the rounds stop at this budget, so that slowness is not mistaken for a
        // hang. At least `minimumRounds` must be played for the test to count.
        let budget = generousDeadline / 3
        let minimumRounds = min(rounds, 300)
        let played = Atomic<Int>(0)
        // Every wait of the poster has this deadline, and says what it waited for when it runs
        // out: a loop that never sleeps, a block or a timer that never runs, and a stop that
        // does not end the run are different bugs. A third of the generous deadline, so that
        // the report comes before the loop thread's own deadline hides it.
        let stuckAfter = generousDeadline / 3
        let fired = Atomic<Int>(0)
        let stuck = Lock<String?>(nil)
        let posterFinished = Atomic<Bool>(false)
        let outcome: Loop.RunResult?
        do {
            outcome = try await onLoopThread(backend) { loop -> Loop.RunResult in
                let keepAlive = Loop.Source {}
                loop.add(keepAlive, to: .default)
                defer { keepAlive.invalidate() }
                try spawnThread {
                    defer {
                        posterFinished.store(true, ordering: .releasing)
                        loop.stop()
                    }
                    /// Spins until `condition` holds; false (with `what` recorded) at the deadline.
                    func waitFor(_ what: @autoclosure () -> String, _ condition: () -> Bool) -> Bool {
                        let deadline = ContinuousClock.now + stuckAfter
                        while !condition() {
                            guard ContinuousClock.now < deadline else {
                                stuck.withLock { $0 = $0 ?? what() }
                                return false
                            }
                            sched_yield()
                        }
                        return true
                    }
                    let budgetEnds = ContinuousClock.now + budget
                    for round in 0..<rounds {
                        guard round < minimumRounds || ContinuousClock.now < budgetEnds else { return }
                        played.store(round + 1, ordering: .releasing)
                        switch round % 3 {
                        case 0: // asleep
                            guard waitFor("round \(round): the loop never went to sleep", { loop.isWaiting }) else {
                                return
                            }
                        case 1: // busy: the timer is added while a block runs, mid-pass
                            let started = Atomic<Bool>(false)
                            loop.perform {
                                started.store(true, ordering: .releasing)
                                let until = ContinuousClock.now + .microseconds(20)
                                while ContinuousClock.now < until {}
                            }
                            guard
                                waitFor(
                                    "round \(round): a block posted to the loop never ran",
                                    { started.load(ordering: .acquiring) }
                                )
                            else { return }
                        default: // right after the previous fire, as its step ends
                            break
                        }
                        let timer = try! Loop.Timer(after: .microseconds(round % 7)) { _ in
                            fired.add(1, ordering: .releasing)
                        }
                        loop.add(timer, to: .default)
                        guard
                            waitFor(
                                "round \(round): the timer never fired", { fired.load(ordering: .acquiring) > round }
                            )
                        else { return }
                    }
                }
                return loop.run(.default, timeout: generousDeadline * 4)
            }
        } catch is TestTimeout {
            outcome = nil
        }
        let finished = posterFinished.load(ordering: .acquiring)
        #expect(stuck.withLock { $0 } == nil, "\(stuck.withLock { $0 } ?? "")")
        #expect(
            outcome != nil || !finished,
            "the poster finished and stopped the loop, but the run went on (fired \(fired.load(ordering: .acquiring)))")
        #expect(outcome == nil || outcome == .stopped)
        #expect(fired.load(ordering: .acquiring) == played.load(ordering: .acquiring))
        #expect(played.load(ordering: .acquiring) >= minimumRounds)
    }
}
