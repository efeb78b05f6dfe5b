import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Timing: a timer added from any thread, at any moment of the pass, fires once due.
///
/// Window: a pass skips its timer step without the loop's lock when no queued timer can be due
/// yet (the timer bound of `PassHints`, a lower bound of every queued instant, lowered under the
/// lock when a timer is queued and set again from the queues when a step finds nothing due). A
/// poster adds one-shot timers due now or a few microseconds ahead while the loop sleeps, while
/// it is busy in a block (mid-pass), and right after the previous timer fired (as the step that
/// fired it sets the bound again); each must fire before the next is added.
///
/// Catches: a bound set from the queues outside the lock or before a concurrent add's lowering,
/// or not lowered by an add — the loop then either sleeps until a deadline that has passed and
/// then polls forever without firing (its step skipped), or sleeps for good.
@Suite("Timer bound race window")
struct TimerBoundRaceTests {
    /// A fixed number of rounds, whatever the load: 5,000 per backend at full scale (a few
    /// tenths of a second on two idle cores). `RUNLOOPKIT_STRESS_SCALE` scales it down, as the
    /// Thread Sanitizer run does (0.01), but never below 500 rounds (about 170 of each moment),
    /// which still hunts the window. No time budget: a loaded machine makes the rounds slower,
    /// not fewer.
    static let rounds = scaled(5_000, minimum: 500)

    @Test(
        "timers added from another thread, asleep, busy or just after a fire, all fire", arguments: backends)
    func timersAddedFromAnotherThreadFire(_ backend: BackendKind) async throws {
        let report = try await offThePool { TimerBoundRace(backend: backend).run(rounds: Self.rounds) }
        if let stuck = report.stuck { Issue.record(Comment(rawValue: stuck)) }
        #expect(report.played == Self.rounds, "\(report.played) of \(Self.rounds) rounds played")
        #expect(report.fired == report.played, "\(report.fired) timers fired in \(report.played) rounds")
        switch report.result {
        case .returned(let result): #expect(result == .stopped)
        case .failed(let error): Issue.record("the loop could not run: \(error)")
        case .hung(let state):
            Issue.record(
                Comment(rawValue: "the poster finished and stopped the loop, but the run went on; the loop:\n\(state)"))
        }
    }
}

/// One loop on a thread of its own and a poster thread that plays the rounds.
private struct TimerBoundRace {
    /// How the loop's run ended.
    enum RunEnd: Sendable {
        case returned(Loop.RunResult)
        case failed(String)
        /// The run had not returned long after the poster stopped it: the loop's state then.
        case hung(String)
    }

    struct Report: Sendable {
        var played = 0
        var fired = 0
        /// The first wait of the poster that ran out: what it waited for, and the loop's state.
        var stuck: String?
        var result: RunEnd
    }

    let backend: BackendKind

    /// How long the poster may take in all. Each of its waits has a deadline of its own, so
    /// only a poster stuck outside them (in `add`, say) comes near this.
    static let posterLimit: Duration = .seconds(600)

    func run(rounds: Int) -> Report {
        // Every wait of the poster has this deadline, and says what it waited for when it runs
        // out: a loop that never sleeps, a block or a timer that never runs are different bugs.
        let stuckAfter = generousDeadline
        let fired = AtomicInt()
        let played = AtomicInt()
        let stuck = Lock<String?>(nil)
        let runEnd = Lock<RunEnd?>(nil)
        let loopRef = Lock<Loop?>(nil)
        let posterDone = Latch()
        let runDone = Latch()
        let backend = self.backend
        do {
            _ = try TestThread {
                defer { runDone.open() }
                let loop: Loop
                do {
                    loop = try Loop.current(backend: backend)
                } catch {
                    runEnd.withLock { $0 = .failed("\(error)") }
                    posterDone.open()
                    return
                }
                loopRef.withLock { $0 = loop }
                let keepAlive = Loop.Source {}
                loop.add(keepAlive, to: .default)
                defer { keepAlive.invalidate() }
                do {
                    _ = try TestThread {
                        defer {
                            posterDone.open()
                            loop.stop()
                        }
                        Self.play(
                            rounds: rounds, on: loop, stuckAfter: stuckAfter, fired: fired, played: played, stuck: stuck
                        )
                    }
                } catch {
                    runEnd.withLock { $0 = .failed("no poster thread: \(error)") }
                    posterDone.open()
                    return
                }
                // No timeout of its own: the poster's stop ends the run, or the test reports it.
                let result = loop.run(.default, timeout: .seconds(3600))
                runEnd.withLock { $0 = $0 ?? .returned(result) }
            }
        } catch {
            return Report(result: .failed("no loop thread: \(error)"))
        }
        if !posterDone.wait(for: Self.posterLimit) {
            let state = loopRef.withLock { $0 }.map(Self.state(of:)) ?? "no loop"
            stuck.withLock { $0 = $0 ?? "the poster did not finish within \(Self.posterLimit); the loop:\n\(state)" }
        }
        if !runDone.wait(for: generousDeadline) {
            let state = loopRef.withLock { $0 }.map(Self.state(of:)) ?? "no loop"
            runEnd.withLock { $0 = $0 ?? .hung(state) }
        }
        return Report(
            played: played.value, fired: fired.value,
            stuck: stuck.withLock { $0 }, result: runEnd.withLock { $0 } ?? .failed("the run did not report"))
    }

    /// The poster: adds one timer per round, each after the previous one fired, at the round's
    /// moment of the loop's pass.
    private static func play(
        rounds: Int, on loop: Loop, stuckAfter: Duration, fired: AtomicInt, played: AtomicInt,
        stuck: Lock<String?>
    ) {
        /// Spins until `condition` holds; false at the deadline, with what it waited for and the
        /// loop's state then recorded (an unexplained hang names its cause).
        func waitFor(_ what: @autoclosure () -> String, _ condition: @autoclosure () -> Bool) -> Bool {
            let deadline = ContinuousClock.now + stuckAfter
            while !condition() {
                guard ContinuousClock.now < deadline else {
                    let report = "\(what()) within \(stuckAfter); the loop:\n\(state(of: loop))"
                    stuck.withLock { $0 = $0 ?? report }
                    return false
                }
                sched_yield()
            }
            return true
        }
        // A wait that runs out has recorded its report in `stuck` (which fails the test): the
        // rounds end there.
        rounds: for round in 0..<rounds {
            played.store(round + 1)
            switch round % 3 {
            case 0: // asleep
                guard waitFor("round \(round): the loop never went to sleep", loop.isWaiting) else { break rounds }
            case 1: // busy: the timer is added while a block runs, mid-pass
                let started = Atomic<Bool>(false)
                loop.perform {
                    started.store(true, ordering: .releasing)
                    let until = ContinuousClock.now + .microseconds(20)
                    while ContinuousClock.now < until {}
                }
                guard
                    waitFor("round \(round): a block posted to the loop never ran", started.load(ordering: .acquiring))
                else { break rounds }
            default: // right after the previous fire, as its step ends
                break
            }
            let timer = try! Loop.Timer(after: .microseconds(round % 7)) { _ in
                fired.increment()
            }
            loop.add(timer, to: .default)
            guard waitFor("round \(round): the timer never fired", fired.value > round) else {
                return
            }
        }
    }

    /// The loop's description and statistics, read from another thread.
    private static func state(of loop: Loop) -> String {
        "\(loop.debugDescription)\nstatistics: \(loop.statistics)"
    }
}
