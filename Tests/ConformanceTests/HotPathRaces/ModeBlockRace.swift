import RunLoopKit
import TestSupport
import Testing

// Hunts the window of `BlockQueue`'s lock-free count with modes: blocks for a mode that is not
// running, taken or skipped by drains of the other mode while the loop alternates modes.
// Guards [B2] (a block waits for one of its modes, then runs there in its poster's order),
// Sources/Core/RunLoopKit.docc/BehaviourContract.md. The lost wake is `BlockRace.swift`'s.

extension HotPathRaceTests {
    /// The same window with modes: the loop alternates short runs of two modes (the second one
    /// common) and sleeps in each; blocks are posted for the first mode, the second, both, the
    /// common modes, or the first and the common modes. A block for a mode that is not running
    /// waits, and runs once its mode runs; a poster's blocks that can run in a mode run there in
    /// the order posted.
    ///
    /// Catches: a block taken in the wrong mode (a mode's bit, the common bit or the common
    /// modes resolved wrongly), a block for the other mode dropped or stranded by a drain that
    /// took a run of 64 past it, a count that reads zero while blocks for the other mode wait
    /// (the mode's turn comes and nothing runs: deadline), and an older block of the same
    /// poster overtaken in the mode where both can run. (A lost wake is the previous test's:
    /// here the runs' timeouts would end the sleep anyway.)
    ///
    /// With `bursts`, each poster posts runs of up to 200 blocks of one kind, so the queue often
    /// holds blocks of one kind only and a drain takes it whole (a buffer swap): that catches a
    /// whole-queue take of a block that does not run in the mode, and blocks of the drained
    /// buffer or of the queue behind it run out of order.
    @Test(
        "BlockQueue with modes: blocks for a mode that is not running wait, then run when it runs, in order, while the loop alternates modes",
        arguments: backends, [false, true])
    func blocksForAlternatingModes(_ backend: BackendKind, bursts: Bool) async throws {
        let perPoster = scaled(20_000, minimum: 300)
        let outcome = try await offThePool {
            try ModeBlockRace(backend: backend).run(posters: 2, blocksEach: perPoster, bursts: bursts)
        }
        #expect(outcome.stalled.isEmpty, "blocks never ran: \(outcome.stalled)")
        #expect(outcome.violations.isEmpty, "\(outcome.violationCount) violations, the first: \(outcome.violations)")
        #expect(outcome.ran == outcome.posted && outcome.posted == 2 * perPoster)
        expectClean(outcome.report)
    }
}

private struct ModeBlockRace {
    typealias Outcome = BlockRace.Outcome

    static let first: Loop.Mode = "hot-path.blocks.first"
    /// Made common: blocks for the common modes run here (and in `.default`, never run).
    static let second: Loop.Mode = "hot-path.blocks.second"

    /// Which modes a block is posted for.
    enum Kind: CaseIterable, Sendable {
        case first, second, both, common, firstOrCommon

        /// Whether it runs in `first` (`inFirst`) or in `second`.
        func runs(inFirst: Bool) -> Bool {
            switch self {
            case .first: inFirst
            case .second, .common: !inFirst
            case .both, .firstOrCommon: true
            }
        }

        func post(to loop: Loop, _ block: @escaping @Sendable () -> Void) {
            switch self {
            case .first: loop.perform(in: [ModeBlockRace.first], block)
            case .second: loop.perform(in: [ModeBlockRace.second], block)
            case .both: loop.perform(in: [ModeBlockRace.first, ModeBlockRace.second], block)
            case .common: loop.perform(block)
            case .firstOrCommon: loop.perform(in: [ModeBlockRace.first, .common], block)
            }
        }
    }

    /// What the blocks report, touched only on the loop's thread (blocks run there), except
    /// the counts posters wait on.
    final class Ledger: @unchecked Sendable {
        // @unchecked: `done` and `frontier` are read and written only on the loop's thread.
        let plans: [[Kind]]
        private var done: [[Bool]]
        /// Per poster and mode (0: first, 1: second), the oldest block that runs in that mode
        /// and has not run yet.
        private var frontier: [[Int]]
        let ran: [AtomicInt]
        let beacons: [HotPathBeacon]
        let violations = Violations()

        init(plans: [[Kind]]) {
            self.plans = plans
            done = plans.map { [Bool](repeating: false, count: $0.count) }
            frontier = plans.map { _ in [0, 0] }
            ran = plans.map { _ in AtomicInt() }
            beacons = plans.map { _ in HotPathBeacon() }
        }

        func ran(poster: Int, index: Int, in mode: Loop.Mode?) {
            defer {
                ran[poster].increment()
                beacons[poster].ping()
            }
            let kind = plans[poster][index]
            guard mode == ModeBlockRace.first || mode == ModeBlockRace.second else {
                violations.record(
                    "poster \(poster): block \(index) (\(kind)) ran in \(mode.map { "\($0)" } ?? "no mode")")
                return
            }
            let inFirst = mode == ModeBlockRace.first
            if !kind.runs(inFirst: inFirst) {
                violations.record("poster \(poster): block \(index) (\(kind)) ran in \(mode!)")
            }
            if done[poster][index] { violations.record("poster \(poster): block \(index) ran twice") }
            done[poster][index] = true
            let column = inFirst ? 0 : 1
            let plan = plans[poster]
            var oldest = frontier[poster][column]
            while oldest < plan.count, done[poster][oldest] || !plan[oldest].runs(inFirst: inFirst) { oldest += 1 }
            frontier[poster][column] = oldest
            if oldest < index {
                violations.record(
                    "poster \(poster): block \(index) (\(kind)) ran in \(mode!) before the older block \(oldest) (\(plan[oldest])) that runs there too"
                )
            }
        }
    }

    let backend: BackendKind

    func run(posters: Int, blocksEach: Int, bursts: Bool) throws -> Outcome {
        let plans: [[Kind]] = (0..<posters).map { poster in
            var random = SeededRandom(0x0DE5_0000 &+ UInt64(poster))
            guard bursts else { return (0..<blocksEach).map { _ in Kind.allCases[random.below(Kind.allCases.count)] } }
            var plan: [Kind] = []
            while plan.count < blocksEach {
                let kind = Kind.allCases[random.below(Kind.allCases.count)]
                plan += repeatElement(kind, count: min(1 + random.below(200), blocksEach - plan.count))
            }
            return plan
        }
        let ledger = Ledger(plans: plans)
        let finished = Latch()
        let host = try HotPathLoop(
            backend, readyIn: [Self.first, Self.second],
            prepare: { loop in
                loop.addCommonMode(Self.second)
                // Never signalled: they keep both modes alive, and nothing but the posters and the
                // runs' timeouts ends a sleep.
                let keepAlive = [Loop.Source {}, Loop.Source {}]
                loop.add(keepAlive[0], to: Self.first)
                loop.add(keepAlive[1], to: Self.second)
                return { for source in keepAlive { source.invalidate() } }
            },
            run: { loop in
                // Short runs, each of which sleeps until woken or timed out.
                while !finished.isOpen {
                    loop.run(Self.first, timeout: .microseconds(400))
                    loop.run(Self.second, timeout: .microseconds(400))
                }
            })
        let loop = host.loop
        let stalled = Lock<[String]>([])
        var threads: [TestThread] = []
        for poster in 0..<posters {
            threads.append(
                try TestThread {
                    var random = SeededRandom(0xB10C_1000 &+ UInt64(poster))
                    let spin = AtomicInt()
                    let plan = plans[poster]
                    var posted = 0
                    while posted < plan.count {
                        for _ in 0..<min(plan.count - posted, 1 + random.below(100)) {
                            let index = posted
                            plan[index].post(to: loop) {
                                ledger.ran(poster: poster, index: index, in: loop.currentMode)
                            }
                            posted += 1
                        }
                        if random.below(6) == 0 || posted == plan.count {
                            let target = posted
                            guard
                                ledger.beacons[poster].wait(
                                    spinning: random.below(2) * 4_000, until: { ledger.ran[poster].value >= target })
                            else {
                                stalled.withLock {
                                    $0.append(
                                        "poster \(poster): \(ledger.ran[poster].value) of the first \(target) blocks ran"
                                    )
                                }
                                return
                            }
                        } else {
                            HotPathMoment(&random).pause(loop, spinningOn: spin)
                        }
                    }
                })
        }
        if !joinPosters(threads, whileProgressing: { ledger.ran.reduce(0) { $0 + $1.value } }) {
            stalled.withLock { $0.append("a poster did not finish, and no block ran for \(generousDeadline)") }
        }
        var outcome = Outcome()
        outcome.report = host.finish { _ in finished.open() }
        outcome.stalled = stalled.withLock { $0 }
        outcome.violations = ledger.violations.first
        outcome.violationCount = ledger.violations.count
        outcome.ran = ledger.ran.reduce(0) { $0 + $1.value }
        outcome.posted = plans.reduce(0) { $0 + $1.count }
        return outcome
    }
}
