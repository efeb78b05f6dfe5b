import Dispatch
import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// The race windows of a pass's lock-free fast paths, one test each (behaviour contract,
/// Sources/Core/RunLoopKit.docc/BehaviourContract.md › C2: No lost wakeups; L4: Everything else
/// from any thread).
///
/// A pass looks at some state without the loop's lock: whether a version-0 source may be
/// signalled (`Loop.maybeSignalled`), whether blocks are queued (`BlockQueue`'s count, with
/// `SleepGate` between the loop's decision to sleep and a poster's wake), whether `wakeUp()` is
/// pending (`Loop.wakeRequested`), which observers to notify (a snapshot kept while
/// `observersVersion` is unchanged) and whether the descriptors changed
/// (`Loop.descriptorsChanged`). Each test has threads change that state at varied moments of
/// the loop's pass (right after it reacted, a swept short delay, a yield, once it sleeps) and
/// waits, with ``generousDeadline``, for the loop to react: a change the loop misses shows as a
/// deadline that passes (a loop asleep for good), a wrong reaction as a recorded violation.
/// Nothing here asserts timing. Each test owns its loop, on a thread of its own; sizes scale
/// with `RUNLOOPKIT_STRESS_SCALE`.
///
/// Each test's "Catches" was checked by planting that bug in a copy of Core: every one failed
/// its test (the narrowest ones — a store a few instructions past an unlock — in about half
/// the runs of one backend; the others at once).
@Suite("Hot-path race windows")
struct HotPathRaceTests {
    // MARK: - 1. maybeSignalled

    /// Window: `signal()` marks the source signalled, then, under the loop's lock, lists it and
    /// sets `maybeSignalled`; the loop skips its signalled sources without the lock while
    /// `maybeSignalled` is false, and clears it (under the lock) when it finds the list empty.
    /// The poster signals in bursts of 1–4 (sometimes with a `wakeUp()` too) at every moment of
    /// the pass — most often right after the source ran, when the next pass prunes it and finds
    /// the list empty — and after each burst waits (spinning at first, so that its next signal
    /// lands while the loop is still in that pass) for a perform that began after its last
    /// signal, and for the source to be left unsignalled.
    ///
    /// Catches: `maybeSignalled` cleared outside the lock or after a check made without it, or
    /// set before the source is listed — a signal landing in between leaves it false over a
    /// listed signalled source: the loop then either sleeps for good or polls forever without
    /// performing it (both miss the deadline). A perform with no signal since the last (more
    /// performs than signals) and a spurious wakeup are recorded too.
    @Test(
        "maybeSignalled: a source signalled at any moment of the pass is performed after its last signal, never left signalled while the loop sleeps",
        arguments: backends)
    func signalRacesTheEmptiedSignalledList(_ backend: BackendKind) async throws {
        let bursts = scaled(20_000, minimum: 200)
        let outcome = try await onDedicatedThread { try SignalRace(backend: backend).run(bursts: bursts) }
        #expect(
            outcome.missed == nil,
            "burst \(outcome.missed ?? 0) of \(bursts): the source was not performed after its last signal, or stayed signalled"
        )
        #expect(
            outcome.performs <= outcome.signals,
            "\(outcome.performs) performs for \(outcome.signals) signals: a perform without a signal")
        #expect(outcome.performs >= outcome.bursts, "\(outcome.performs) performs for \(outcome.bursts) bursts")
        expectClean(outcome.report)
    }

    // MARK: - 2. BlockQueue's count and SleepGate

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
        let outcome = try await onDedicatedThread { try BlockRace(backend: backend).run(posters: 3, rounds: rounds) }
        #expect(outcome.stalled.isEmpty, "blocks never ran: \(outcome.stalled)")
        #expect(outcome.violations.isEmpty, "\(outcome.violationCount) violations, the first: \(outcome.violations)")
        #expect(outcome.ran == outcome.posted && outcome.posted >= 3 * rounds)
        expectClean(outcome.report)
    }

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
    @Test(
        "BlockQueue with modes: blocks for a mode that is not running wait, then run when it runs, in order, while the loop alternates modes",
        arguments: backends)
    func blocksForAlternatingModes(_ backend: BackendKind) async throws {
        let perPoster = scaled(20_000, minimum: 300)
        let outcome = try await onDedicatedThread {
            try ModeBlockRace(backend: backend).run(posters: 2, blocksEach: perPoster)
        }
        #expect(outcome.stalled.isEmpty, "blocks never ran: \(outcome.stalled)")
        #expect(outcome.violations.isEmpty, "\(outcome.violationCount) violations, the first: \(outcome.violations)")
        #expect(outcome.ran == outcome.posted && outcome.posted == 2 * perPoster)
        expectClean(outcome.report)
    }

    // MARK: - 3. wakeRequested

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
        let outcome = try await onDedicatedThread { try WakeUpRace(backend: backend).run(rounds: rounds) }
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
        #expect(outcome.report?.statistics.timeoutWakeups == 0)
    }

    // MARK: - 4. Observer snapshot

    /// Window: a notification calls the observers of a snapshot the loop's thread keeps while
    /// `observersVersion` is unchanged (and none at all before `hasHadObservers` is set); other
    /// threads add and remove observers under the lock and bump the version. A poster adds an
    /// observer (to `.default` or `.common`, the very first one of the loop in round 0) and
    /// takes it out again (`invalidate()` or `remove(_:from:)`) while a second thread keeps the
    /// loop making passes with `wakeUp()`.
    ///
    /// What the project promises for removal from another thread (`Observer.invalidate()`:
    /// "it is never called again"; the stress test's `ChurnRecord` states the precise form): a
    /// notification that had already begun may still call it; once a block posted after the
    /// removal returned has run, it is never called again. A block runs in a drain, and two
    /// drains of a run are always separated by a notification, so the checks are:
    /// - added: a block posted after `add` returned, then a second block posted once the first
    ///   ran; by the second the observer was called (a notification came between them);
    /// - removed: a block posted after the removal returned marks it gone; any later call is a
    ///   violation; and by a second block its snapshot was replaced, so the observer and what
    ///   its callback captured are released (a weak reference is nil there).
    ///
    /// Catches: a snapshot not refreshed when the version changes (a removed but still valid
    /// observer called — `remove(_:from:)` leaves it valid, so only the snapshot keeps it out;
    /// an added one not called), a version bumped outside the lock or before the change, the
    /// first observer missed by the `hasHadObservers` fast path, and a snapshot that keeps
    /// removed observers (and their captures) alive.
    @Test(
        "observer snapshot: observers added and removed from another thread while the loop makes passes are called from the next notification, never after the removal's block ran, and released",
        arguments: backends)
    func observersChurnedFromAnotherThread(_ backend: BackendKind) async throws {
        let rounds = scaled(6_000, minimum: 100)
        let outcome = try await onDedicatedThread { try ObserverRace(backend: backend).run(rounds: rounds) }
        #expect(
            outcome.missed == nil, "round \(outcome.missed ?? 0) of \(rounds): a block posted by the test never ran")
        #expect(outcome.violations.isEmpty, "\(outcome.violationCount) violations, the first: \(outcome.violations)")
        expectClean(outcome.report)
    }

    // MARK: - 5. descriptorsChanged

    /// Window: a pass skips bringing the backend's registrations in line when
    /// `descriptorsChanged` is false (read without the lock) and its mode is the one
    /// registered; the loop's decision to sleep looks at the flag again under the lock, and a
    /// removal syncs the registrations itself from its own thread (waking the loop, which holds
    /// the backend while it sleeps). A poster adds 1–3 descriptor sources on fresh pipes (to
    /// `.default` or `.common`, the pipe written before or after the add) at every moment of the
    /// pass, mostly while the loop sleeps, waits for each to fire, takes them out
    /// (`invalidate()` or `remove(_:from:)`), writes their pipes again and makes the loop wait
    /// three more times.
    ///
    /// Each handler drains its pipe, which is written once before the removal: it fires exactly
    /// once. Catches: a source added while the loop goes to sleep and never registered (the
    /// flag cleared by a sync that did not include it, or looked at only without the lock):
    /// its handler misses the deadline; a removed descriptor still registered when the removal
    /// returned (`registeredDescriptorCount`), or still reported by the kernel (its handler
    /// fires again, or the loop's waits end for nothing: a spurious wakeup).
    @Test(
        "descriptorsChanged: descriptor sources added from another thread while the loop sleeps fire; removed ones leave the backend before removal returns and never fire again",
        arguments: backends)
    func descriptorSourcesChurnedWhileAsleep(_ backend: BackendKind) async throws {
        let rounds = scaled(1_500, minimum: 60)
        let outcome = try await onDedicatedThread {
            try DescriptorRace(backend: backend, alternating: false).run(rounds: rounds)
        }
        #expect(outcome.missed == nil, "round \(outcome.missed ?? 0) of \(rounds): \(outcome.why)")
        #expect(outcome.violations.isEmpty, "\(outcome.violationCount) violations, the first: \(outcome.violations)")
        expectClean(outcome.report)
    }

    /// The same with the loop alternating short runs of two modes: each source joins the first
    /// mode, the second or both (from the poster, at any moment of the switch), fires only
    /// while one of its modes runs, and exactly once; removed, it leaves the backend before the
    /// removal returns. Switching modes re-registers the mode's descriptors (the fast path's
    /// other half: the registered mode), which races the poster's changes.
    ///
    /// Catches: a change made while the other mode is registered and lost at the switch (the
    /// flag cleared, or the changed descriptors forgotten, by a sync of the other mode), a
    /// registration left from the other mode (a handler called while its mode does not run, or
    /// a descriptor left registered after its removal), and a source added to the running mode
    /// just as the loop leaves it and never registered when it comes back. (A source added
    /// while the loop sleeps and never registered is the previous test's: here the runs'
    /// timeouts re-sync at the next switch.)
    @Test(
        "descriptorsChanged with modes: descriptor sources added and removed from another thread while the loop alternates modes fire only in their modes, exactly once",
        arguments: backends)
    func descriptorSourcesChurnedAcrossModes(_ backend: BackendKind) async throws {
        let rounds = scaled(800, minimum: 40)
        let outcome = try await onDedicatedThread {
            try DescriptorRace(backend: backend, alternating: true).run(rounds: rounds)
        }
        #expect(outcome.missed == nil, "round \(outcome.missed ?? 0) of \(rounds): \(outcome.why)")
        #expect(outcome.violations.isEmpty, "\(outcome.violationCount) violations, the first: \(outcome.violations)")
        expectClean(outcome.report)
    }

    /// The loop's thread finished (a lost wake would leave it asleep), left nothing registered
    /// in the backend and never woke for nothing.
    private func expectClean(_ report: HotPathLoop.Report?, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let report else {
            Issue.record(
                "the loop's thread did not finish within \(generousDeadline) of being stopped",
                sourceLocation: sourceLocation)
            return
        }
        #expect(report.registeredDescriptors == 0, "descriptors left registered", sourceLocation: sourceLocation)
        #expect(report.inKernel.isEmpty, "left registered in the kernel", sourceLocation: sourceLocation)
        #expect(report.statistics.spuriousWakeups == 0, "spurious wakeups", sourceLocation: sourceLocation)
    }
}

// MARK: - 1. maybeSignalled

private struct SignalRace {
    struct Outcome: Sendable {
        var missed: Int?
        var bursts = 0
        var signals = 0
        var performs = 0
        var report: HotPathLoop.Report?
    }

    let backend: BackendKind

    func run(bursts: Int) throws -> Outcome {
        // The number of the poster's latest signal, stored before it signals; a perform reads
        // it when it begins, so a perform that read `n` began after signal `n` was stored.
        let epoch = AtomicInt()
        let seen = AtomicInt()
        let performs = AtomicInt()
        let beacon = HotPathBeacon()
        let sourceRef = Ref<Loop.Source>()
        // No timer, no descriptor: only the poster's signals and wakes end a sleep. The source
        // itself keeps the mode alive.
        let host = try HotPathLoop(backend) { loop in
            let source = Loop.Source {
                let now = epoch.value
                if now > seen.value { seen.store(now) }
                performs.increment()
                beacon.ping()
            }
            loop.add(source, to: .default)
            sourceRef.value = source
            return { source.invalidate() }
        }
        let loop = host.loop
        guard let source = sourceRef.value else { throw TestTimeout() }

        var outcome = Outcome()
        var random = HotPathRandom(0x5EED_0001)
        for burst in 0..<bursts {
            for _ in 0...random.below(4) {
                HotPathMoment(&random).pause(loop, spinningOn: epoch)
                outcome.signals += 1
                epoch.store(outcome.signals)
                source.signal()
                if random.below(4) == 0 { loop.wakeUp() }
            }
            outcome.bursts += 1
            let last = outcome.signals
            // Signals coalesce, so "once more after the last" is what each burst owes: a
            // perform that began after the last signal, and no signal left pending. (The
            // perform count, read first, is stored after the perform cleared the flag.)
            let quiet = beacon.wait(spinning: random.below(2) * 4_000) {
                _ = performs.value
                return seen.value >= last && !source.isSignalled
            }
            if !quiet {
                outcome.missed = burst
                break
            }
        }
        outcome.report = host.finish()
        outcome.performs = performs.value
        return outcome
    }
}

// MARK: - 2. Blocks

private struct BlockRace {
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
        var threads: [JoinableThread] = []
        for poster in 0..<posters {
            threads.append(
                try JoinableThread {
                    var random = HotPathRandom(0xB10C_0000 &+ UInt64(poster))
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
        if !join(threads, whileProgressing: { ledger.ran.reduce(0) { $0 + $1.value } }) {
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

    func run(posters: Int, blocksEach: Int) throws -> Outcome {
        let plans: [[Kind]] = (0..<posters).map { poster in
            var random = HotPathRandom(0x0DE5_0000 &+ UInt64(poster))
            return (0..<blocksEach).map { _ in Kind.allCases[random.below(Kind.allCases.count)] }
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
        var threads: [JoinableThread] = []
        for poster in 0..<posters {
            threads.append(
                try JoinableThread {
                    var random = HotPathRandom(0xB10C_1000 &+ UInt64(poster))
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
        if !join(threads, whileProgressing: { ledger.ran.reduce(0) { $0 + $1.value } }) {
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

// MARK: - 3. wakeRequested

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
        var random = HotPathRandom(0x3A4E_0001)
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

// MARK: - 4. Observers

private struct ObserverRace {
    struct Outcome: Sendable {
        var missed: Int?
        var violations: [String] = []
        var violationCount = 0
        var report: HotPathLoop.Report?
    }

    /// What one round's observer saw. Its fields are written and checked on the loop's thread.
    final class Record: Sendable {
        let round: Int
        let calls = AtomicInt()
        let gone = Atomic<Bool>(false)
        let violations: Violations

        init(round: Int, violations: Violations) {
            self.round = round
            self.violations = violations
        }

        func call() {
            if gone.load(ordering: .sequentiallyConsistent) {
                violations.record(
                    "round \(round): the observer was called after a block posted after its removal had run")
            }
            calls.increment()
        }
    }

    /// What a round's observer callback captures: it must go with the observer.
    final class Canary: Sendable {}

    let backend: BackendKind

    func run(rounds: Int) throws -> Outcome {
        // No observer until the first round adds one from the poster: that one also crosses
        // the "no observer was ever added" fast path.
        let host = try HotPathLoop(backend) { loop in
            let keepAlive = Loop.Source {}
            loop.add(keepAlive, to: .default)
            return { keepAlive.invalidate() }
        }
        let loop = host.loop
        let violations = Violations()
        // Keeps the loop making passes while observers come and go.
        let driving = Atomic<Bool>(true)
        let driver = try JoinableThread {
            var random = HotPathRandom(0xD71E_0001)
            while driving.load(ordering: .relaxed) {
                loop.wakeUp()
                var pause = timespec(tv_sec: 0, tv_nsec: 1_000 * random.below(100))
                nanosleep(&pause, nil)
            }
        }
        var outcome = Outcome()
        var random = HotPathRandom(0x0B5E_0001)
        let spin = AtomicInt()
        for round in 0..<rounds {
            let record = Record(round: round, violations: violations)
            let canary = addThenRemove(
                round: round, record: record, loop: loop, random: &random, spin: spin, violations: violations)
            guard let canary else {
                outcome.missed = round
                break
            }
            // The poster let go of the observer. Past the block that marks it gone, it is never
            // called; by the next block, its snapshot was replaced and it was released.
            let released = twoBlocks(
                loop, first: { record.gone.store(true, ordering: .sequentiallyConsistent) },
                then: {
                    if canary.object != nil {
                        violations.record(
                            "round \(round): a removed observer (and its callback's captures) outlived the loop's next notification"
                        )
                    }
                })
            guard released else {
                outcome.missed = round
                break
            }
        }
        driving.store(false, ordering: .relaxed)
        driver.join()
        outcome.report = host.finish()
        outcome.violations = violations.first
        outcome.violationCount = violations.count
        return outcome
    }

    /// Adds an observer from this thread, checks the loop calls it from its next notification,
    /// then takes it out; returns a weak reference to what its callback captured, or `nil` if
    /// a block never ran.
    private func addThenRemove(
        round: Int, record: Record, loop: Loop, random: inout HotPathRandom, spin: AtomicInt, violations: Violations
    ) -> HotPathWeak<Canary>? {
        let canary = Canary()
        let weakCanary = HotPathWeak(canary)
        let mode: Loop.Mode = random.below(2) == 0 ? .default : .common
        let observer = Loop.Observer(
            activities: [.beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting], order: random.below(3) - 1
        ) { _, _ in
            withExtendedLifetime(canary) {}
            record.call()
        }
        HotPathMoment(&random).pause(loop, spinningOn: spin)
        loop.add(observer, to: mode)
        let called = twoBlocks(
            loop, first: {},
            then: {
                if record.calls.value == 0 {
                    violations.record(
                        "round \(round): an observer added to \(mode) from another thread was not called by the notification after a block posted after the add"
                    )
                }
            })
        guard called else { return nil }
        HotPathMoment(&random).pause(loop, spinningOn: spin)
        if random.below(2) == 0 {
            observer.invalidate()
        } else {
            loop.remove(observer, from: mode)
        }
        return weakCanary
    }

    /// Posts `first`, waits until it ran, then posts `then` and waits until it ran: the two run
    /// in different drains, and a notification always comes between two drains of a run.
    private func twoBlocks(
        _ loop: Loop, first: @escaping @Sendable () -> Void, then: @escaping @Sendable () -> Void
    ) -> Bool {
        for block in [first, then] {
            let ran = Latch()
            loop.perform {
                block()
                ran.open()
            }
            guard ran.wait() else { return false }
        }
        return true
    }
}

// MARK: - 5. Descriptors

private struct DescriptorRace {
    struct Outcome: Sendable {
        var missed: Int?
        var why = ""
        var violations: [String] = []
        var violationCount = 0
        var report: HotPathLoop.Report?
    }

    static let first: Loop.Mode = "hot-path.descriptors.first"
    static let second: Loop.Mode = "hot-path.descriptors.second"

    /// One source on a fresh pipe, and what its handler saw.
    final class Probe: Sendable {
        let pipe: Pipe
        let modes: [Loop.Mode]
        let calls = AtomicInt()
        /// 1 once the removal returned.
        let removed = AtomicInt()
        let source: Loop.Source

        /// With `loop`, the handler also checks that one of `modes` is running.
        init(
            modes: [Loop.Mode], checkingModeOf loop: Loop?, label: String, beacon: HotPathBeacon, violations: Violations
        ) throws {
            let pipe = try Pipe()
            self.pipe = pipe
            self.modes = modes
            let calls = self.calls
            let removed = self.removed
            source = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                if removed.value != 0 {
                    violations.record("\(label): the handler was called after the removal returned")
                }
                if let loop, let mode = loop.currentMode, !modes.contains(mode) {
                    violations.record("\(label): the handler was called while \(mode) ran")
                }
                pipe.drain()
                calls.increment()
                beacon.ping()
            }
        }
    }

    let backend: BackendKind
    /// The loop alternates short runs of `first` and `second` instead of running `.default`.
    let alternating: Bool

    func run(rounds: Int) throws -> Outcome {
        let violations = Violations()
        let waits = AtomicInt()
        let beacon = HotPathBeacon()
        let finished = Latch()
        let alternating = self.alternating
        let modes: [Loop.Mode] = alternating ? [Self.first, Self.second] : [.default]
        let host = try HotPathLoop(
            backend, readyIn: Set(modes),
            prepare: { loop in
                // Never signalled: keeps the modes alive without a descriptor of its own.
                let keepAlive = Loop.Source {}
                let observer = Loop.Observer(activities: .afterWaiting) { _, _ in
                    waits.increment()
                    beacon.ping()
                }
                for mode in modes {
                    loop.add(keepAlive, to: mode)
                    loop.add(observer, to: mode)
                }
                return {
                    keepAlive.invalidate()
                    observer.invalidate()
                }
            },
            run: { loop in
                guard alternating else {
                    loop.run()
                    return
                }
                while !finished.isOpen {
                    loop.run(Self.first, timeout: .microseconds(400))
                    loop.run(Self.second, timeout: .microseconds(400))
                }
            })
        let loop = host.loop
        var outcome = Outcome()
        var random = HotPathRandom(alternating ? 0xFD00_0002 : 0xFD00_0001)
        rounds: for round in 0..<rounds {
            var probes: [Probe] = []
            for index in 0...random.below(3) {
                let joins: [Loop.Mode]
                if alternating {
                    joins = [[Self.first], [Self.second], [Self.first, Self.second]][random.below(3)]
                } else {
                    joins = [random.below(2) == 0 ? .default : .common]
                }
                let probe = try Probe(
                    modes: joins, checkingModeOf: alternating ? loop : nil,
                    label: "round \(round), source \(index) in \(joins)",
                    beacon: beacon, violations: violations)
                probes.append(probe)
                let writesFirst = random.below(2) == 0
                if writesFirst { probe.pipe.fill() }
                HotPathMoment(&random).pause(loop, spinningOn: waits)
                for mode in joins { loop.add(probe.source, to: mode) }
                if !writesFirst { probe.pipe.fill() }
            }
            // Each fires: its registration was not missed.
            for (index, probe) in probes.enumerated() {
                guard beacon.wait(spinning: random.below(2) * 4_000, until: { probe.calls.value >= 1 }) else {
                    outcome.missed = round
                    outcome.why = "source \(index) in \(probe.modes), added from another thread, never fired"
                    // Out of the loop before its pipe closes, so the report counts only leaks.
                    for probe in probes {
                        probe.source.invalidate()
                        probe.pipe.close()
                    }
                    break rounds
                }
            }
            for probe in probes {
                HotPathMoment(&random).pause(loop, spinningOn: waits)
                if random.below(2) == 0 {
                    probe.source.invalidate()
                } else {
                    for mode in probe.modes { loop.remove(probe.source, from: mode) }
                }
                probe.removed.store(1)
                // Readable again: a registration left behind would report it.
                probe.pipe.fill()
            }
            // Out of the backend before the removal returned: as Core counts, and as the kernel
            // tells it (read before the pipes close, which would drop an epoll entry by itself).
            let registered = loop.registeredDescriptorCount
            if registered != 0 {
                violations.record(
                    "round \(round): \(registered) descriptors still registered after every removal returned")
            }
            do {
                let inKernel = try host.kernel.registrations()
                if !inKernel.isEmpty {
                    violations.record("round \(round): the kernel still holds \(inKernel) after every removal returned")
                }
            } catch {
                violations.record("round \(round): \(error)")
            }
            // Three more waits: the second began after the removals returned, and the third
            // follows that one's pass, where a stale registration's handler would have run.
            for _ in 0..<3 {
                let before = waits.value
                loop.wakeUp()
                guard beacon.wait(until: { waits.value > before }) else {
                    outcome.missed = round
                    outcome.why = "the loop made no pass after a wakeUp"
                    break rounds
                }
            }
            for (index, probe) in probes.enumerated() {
                let calls = probe.calls.value
                if calls != 1 {
                    violations.record(
                        "round \(round): source \(index) in \(probe.modes) fired \(calls) times for one write before its removal"
                    )
                }
                probe.pipe.close()
            }
        }
        outcome.report = host.finish { loop in
            if alternating { finished.open() } else { loop.stop() }
        }
        outcome.violations = violations.first
        outcome.violationCount = violations.count
        return outcome
    }
}

// MARK: - Support

/// A loop on a thread of its own, running until the test ends it, for posters on other threads.
private struct HotPathLoop: Sendable {
    /// What the loop's thread saw once its run ended and its items were invalidated.
    struct Report: Sendable {
        var statistics = Loop.Statistics()
        var registeredDescriptors = -1
        /// What the kernel still held for the loop's sources (``KernelRegistrations``), or why
        /// it could not be read.
        var inKernel = ["never read"]
    }

    let loop: Loop
    /// Where the kernel keeps the loop's registrations.
    let kernel: KernelRegistrations
    private let thread: JoinableThread
    private let report: Ref<Report>

    /// Starts the thread: `prepare` sets the loop up on it and returns what to invalidate once
    /// `run` (by default: `run()` until stopped) returns. Returns once the run has begun: a
    /// block posted for `readyIn` has run (a `wakeUp()` before a run has no effect).
    init(
        _ backend: BackendKind,
        readyIn modes: Set<Loop.Mode> = [.default],
        prepare: @escaping @Sendable (Loop) throws -> @Sendable () -> Void,
        run body: @escaping @Sendable (Loop) -> Void = { $0.run() }
    ) throws {
        let ready = Latch()
        let loopRef = Ref<Loop>()
        let kernelRef = Ref<KernelRegistrations>()
        let failure = Ref<String>()
        let report = Ref<Report>()
        thread = try JoinableThread {
            defer { ready.open() }
            let loop: Loop
            let kernel: KernelRegistrations
            let cleanUp: @Sendable () -> Void
            do {
                loop = try Loop.current(backend: backend)
                kernel = try KernelRegistrations.find(for: loop)
                kernelRef.value = kernel
                cleanUp = try prepare(loop)
            } catch {
                failure.value = "\(error)"
                return
            }
            loopRef.value = loop
            loop.perform(in: modes) { ready.open() }
            body(loop)
            cleanUp()
            let inKernel: [String]
            do { inKernel = try kernel.registrations().map(\.description) } catch { inKernel = ["\(error)"] }
            report.value = Report(
                statistics: loop.statistics, registeredDescriptors: loop.registeredDescriptorCount, inKernel: inKernel)
        }
        self.report = report
        guard ready.wait(), let loop = loopRef.value, let kernel = kernelRef.value, failure.value == nil else {
            thread.join(within: generousDeadline)
            throw HotPathSetupFailed(why: failure.value ?? "the loop's thread did not start its run")
        }
        self.loop = loop
        self.kernel = kernel
    }

    /// Ends the run with `end` (by default `stop()`) and joins the loop's thread; `nil` if the
    /// thread did not finish in time (a lost wake, say), which is then left behind.
    func finish(_ end: (Loop) -> Void = { $0.stop() }) -> Report? {
        end(loop)
        guard thread.join(within: generousDeadline) else { return nil }
        return report.value
    }
}

private struct HotPathSetupFailed: Error {
    let why: String
}

/// Lets one thread wait, without spinning, for a condition other threads make true and then
/// announce with ``ping()``. Conditions read sequentially consistent atomics (``AtomicInt``):
/// either the waiter sees the change, or the pinger sees it waiting and wakes it.
private final class HotPathBeacon: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let waiting = Atomic<Bool>(false)

    /// Call after a change a waiter may be waiting for; from any thread.
    func ping() {
        if waiting.load(ordering: .sequentiallyConsistent) { semaphore.signal() }
    }

    /// Waits until `condition` holds; false if it still does not after `timeout`. One waiter
    /// at a time. With `spinning`, looks that many times before it blocks: a waiter that
    /// sees the change within a few microseconds acts while the loop is still on its way back
    /// to sleep, where the race windows are (blocking and being woken takes longer than that).
    func wait(within timeout: Duration = generousDeadline, spinning: Int = 0, until condition: () -> Bool) -> Bool {
        for _ in 0..<spinning where condition() { return true }
        if condition() { return true }
        waiting.store(true, ordering: .sequentiallyConsistent)
        defer { waiting.store(false, ordering: .sequentiallyConsistent) }
        let deadline = DispatchTime.now() + .nanoseconds(Int(timeout.nanosecondsRoundedUp))
        while !condition() {
            // Leftover signals from pings nobody waited for only cost a look.
            if semaphore.wait(timeout: deadline) == .timedOut { return condition() }
        }
        return true
    }
}

/// Holds each of `parties` threads in ``arrive()`` until all of them arrived, round after round.
private final class HotPathBarrier: Sendable {
    private let parties: Int
    private let state = Lock<(arrived: Int, generation: Int)>((0, 0))

    init(parties: Int) { self.parties = parties }

    /// Waits until every party arrived; false if they did not within ``generousDeadline``.
    func arrive() -> Bool {
        let waitingFor: Int? = state.withLock { state in
            state.arrived += 1
            guard state.arrived == parties else { return state.generation }
            state.arrived = 0
            state.generation += 1
            return nil
        }
        guard let generation = waitingFor else { return true }
        return hotPathWait { state.withLock { $0.generation } != generation }
    }
}

/// Polls `condition` (yielding, then napping 20 µs) until it holds or `timeout` passes: for
/// states nobody announces, such as `Loop.isWaiting`.
private func hotPathWait(within timeout: Duration = generousDeadline, until condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    var polls = 0
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        polls += 1
        if polls < 64 {
            sched_yield()
        } else {
            var pause = timespec(tv_sec: 0, tv_nsec: 20_000)
            nanosleep(&pause, nil)
        }
    }
    return true
}

/// A seeded generator (a 64-bit LCG, high bits used): every run makes the same choices.
private struct HotPathRandom {
    private var state: UInt64

    init(_ seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }

    /// A number in `0..<bound`.
    mutating func below(_ bound: Int) -> Int { Int((next() >> 33) % UInt64(bound)) }
}

/// When a poster acts next, relative to the loop's pass: a run of a test sweeps them all.
private enum HotPathMoment {
    /// At once: the loop is still finishing the pass that reacted to the last action.
    case atOnce
    /// After a short spin of this many atomic loads, varied in small steps: sweeps the loop's
    /// way back to sleep (its last looks at its queues and flags, publishing that it sleeps,
    /// the wait itself).
    case shortly(Int)
    case yielding
    /// Once the loop sleeps (polled with 10 µs naps, not a spin that would take its CPU, and
    /// bounded: a loop may be slow to get there).
    case asleep

    init(_ random: inout HotPathRandom) {
        let pick = random.next()
        switch pick >> 60 {
        case 0..<5: self = .atOnce
        case 5..<10: self = .shortly(Int((pick >> 40) & 0x3FF))
        case 10..<12: self = .yielding
        default: self = .asleep
        }
    }

    /// Waits for the moment; returns whether the loop was seen asleep (only `asleep` looks).
    @discardableResult
    func pause(_ loop: Loop, spinningOn counter: AtomicInt) -> Bool {
        switch self {
        case .atOnce:
            return false
        case let .shortly(spins):
            for _ in 0..<spins { _ = counter.value }
            return false
        case .yielding:
            sched_yield()
            return false
        case .asleep:
            for _ in 0..<200 {
                if loop.isWaiting { return true }
                var pause = timespec(tv_sec: 0, tv_nsec: 10_000)
                nanosleep(&pause, nil)
            }
            return loop.isWaiting
        }
    }
}

/// A weak reference another thread can read: set once before it is shared.
private final class HotPathWeak<Object: AnyObject>: @unchecked Sendable {
    // @unchecked: `object` is written only by the initializer; Swift's weak references may be
    // read on one thread while the object is released on another.
    private(set) weak var object: Object?

    init(_ object: Object) { self.object = object }
}

/// Joins `threads`, failing only when `progress` stood still for a whole ``generousDeadline``.
///
/// The posters' work takes longer the more loaded the machine (twice as long with two other
/// suites building), so a limit on its whole length fails tests that found nothing; each wait
/// of a poster has a deadline of its own, so a stalled loop is still caught, by that wait or
/// here when nothing moves.
private func join(_ threads: [JoinableThread], whileProgressing progress: () -> Int) -> Bool {
    for thread in threads {
        var last = progress()
        while !thread.join(within: generousDeadline) {
            let now = progress()
            if now == last { return false }
            last = now
        }
    }
    return true
}
