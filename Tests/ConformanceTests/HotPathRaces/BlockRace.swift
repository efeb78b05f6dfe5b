import RunLoopKit
import TestSupport
import Testing

// Hunts the window of `BlockQueue`'s lock-free count and `SleepGate`: a block posted from another
// thread as the loop drains the queue and heads back to sleep.
// Guards [B2] (blocks run once, in their poster's order) and [C2] (no lost wakeups),
// Sources/Core/RunLoopKit.docc/BehaviourContract.md. `ModeBlockRace.swift` hunts the same window
// with modes.

extension HotPathRaceTests {
    /// Window: a drain that finds the queue's atomic count at zero takes no lock, and the loop's
    /// last look before sleeping reads that count after publishing that it sleeps
    /// (`SleepGate.close`), while a poster publishes its block before looking whether the loop
    /// sleeps (`SleepGate.wake`). In each round three posters post a burst at once (mostly 1–8
    /// blocks, now and then up to 150: across the drain's runs of 64), wait until their blocks
    /// ran, and wait for each other: no later post can wake the loop for a round's last block,
    /// posted as the loop drains the others and heads back to sleep.
    ///
    /// Catches: a block stranded by a stale count (the count stored outside the queue's lock or
    /// before the entry is appended, a poster that looks at `sleeping` before publishing, a
    /// missing fence): the loop sleeps with a block queued and the poster's wait misses its
    /// deadline. A block run twice, skipped or out of its poster's order (a run of 64 taken
    /// wrongly) is recorded as a violation.
    @Test(
        "BlockQueue count and SleepGate: blocks from three threads, in bursts across the 64-block runs, the loop sleeping in between: none lost, each poster's in order",
        arguments: backends)
    func blocksFromSeveralThreads(_ backend: BackendKind) async throws {
        let rounds = scaled(5_000, minimum: 100)
        let outcome = try await offThePool { try BlockRace(backend: backend).run(posters: 3, rounds: rounds) }
        #expect(outcome.stalled.isEmpty, "blocks never ran: \(outcome.stalled)")
        #expect(outcome.violations.isEmpty, "\(outcome.violationCount) violations, the first: \(outcome.violations)")
        #expect(outcome.ran == outcome.posted && outcome.posted >= 3 * rounds)
        expectClean(outcome.report)
    }
}

/// Three posters and the loop of `blocksFromSeveralThreads`; `ModeBlockRace` reports in its `Outcome`
/// too.
struct BlockRace {
    struct Outcome: Sendable {
        var stalled: [String] = []
        var violations: [String] = []
        var violationCount = 0
        var ran = 0
        var posted = 0
        var report: HotPathLoop.Report?
    }

    /// What the blocks report, on the loop's thread; posters wait on it.
    final class Ledger: Sendable {
        let ran: [AtomicInt]
        let beacons: [HotPathBeacon]
        let violations = Violations()

        init(posters: Int) {
            ran = (0..<posters).map { _ in AtomicInt() }
            beacons = (0..<posters).map { _ in HotPathBeacon() }
        }

        /// Block `index` of `poster` ran: it must be that poster's next.
        func ran(poster: Int, index: Int) {
            let next = ran[poster].value
            if index != next {
                violations.record("poster \(poster): block \(index) ran when block \(next) was next")
            }
            ran[poster].store(max(next, index + 1))
            beacons[poster].ping()
        }
    }

    let backend: BackendKind

    func run(posters: Int, rounds: Int) throws -> Outcome {
        let ledger = Ledger(posters: posters)
        // A version-0 source never signalled keeps the mode alive; nothing else wakes the loop.
        let host = try HotPathLoop(backend) { loop in
            let keepAlive = Loop.Source {}
            loop.add(keepAlive, to: .default)
            return { keepAlive.invalidate() }
        }
        let loop = host.loop
        let stalled = Lock<[String]>([])
        let barrier = HotPathBarrier(parties: posters)
        let postedBy = (0..<posters).map { _ in AtomicInt() }
        var threads: [TestThread] = []
        for poster in 0..<posters {
            threads.append(
                try TestThread {
                    var random = SeededRandom(0xB10C_0000 &+ UInt64(poster))
                    let spin = AtomicInt()
                    var mine = 0
                    for round in 0..<rounds {
                        HotPathMoment(&random).pause(loop, spinningOn: spin)
                        // Mostly a few blocks; now and then more than a drain's run of 64.
                        let burst = random.below(4) == 0 ? 1 + random.below(150) : 1 + random.below(8)
                        for _ in 0..<burst {
                            let index = mine
                            loop.perform { ledger.ran(poster: poster, index: index) }
                            mine += 1
                        }
                        postedBy[poster].store(mine)
                        let target = mine
                        guard
                            ledger.beacons[poster].wait(
                                spinning: random.below(2) * 4_000, until: { ledger.ran[poster].value >= target })
                        else {
                            stalled.withLock {
                                $0.append(
                                    "poster \(poster), round \(round): \(ledger.ran[poster].value) of its \(target) blocks ran"
                                )
                            }
                            return
                        }
                        // Nobody posts again before every poster's blocks ran: the round's last
                        // block, posted as the loop drains and heads back to sleep, has no later
                        // post to wake the loop for it.
                        guard barrier.arrive() else {
                            stalled.withLock {
                                $0.append("poster \(poster), round \(round): another poster never finished the round")
                            }
                            return
                        }
                    }
                })
        }
        if !joinPosters(threads, whileProgressing: { ledger.ran.reduce(0) { $0 + $1.value } }) {
            stalled.withLock { $0.append("a poster did not finish, and no block ran for \(generousDeadline)") }
        }
        var outcome = Outcome()
        outcome.report = host.finish()
        outcome.stalled = stalled.withLock { $0 }
        outcome.violations = ledger.violations.first
        outcome.violationCount = ledger.violations.count
        outcome.ran = ledger.ran.reduce(0) { $0 + $1.value }
        outcome.posted = postedBy.reduce(0) { $0 + $1.value }
        return outcome
    }
}
