import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

// Hunts the window of the observer snapshot the loop's thread keeps while `observersVersion` is
// unchanged: observers added and removed from another thread while the loop notifies.
// Guards [O2] (snapshot and order) and [I2] (invalidation: never called once removed, and
// released), Sources/Core/RunLoopKit.docc/BehaviourContract.md.

extension HotPathRaceTests {
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
        let outcome = try await offThePool { try ObserverRace(backend: backend).run(rounds: rounds) }
        #expect(
            outcome.missed == nil, "round \(outcome.missed ?? 0) of \(rounds): a block posted by the test never ran")
        #expect(outcome.violations.isEmpty, "\(outcome.violationCount) violations, the first: \(outcome.violations)")
        expectClean(outcome.report)
    }
}

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
        let driver = try TestThread {
            var random = SeededRandom(0xD71E_0001)
            while driving.load(ordering: .relaxed) {
                loop.wakeUp()
                var pause = timespec(tv_sec: 0, tv_nsec: 1_000 * random.below(100))
                nanosleep(&pause, nil)
            }
        }
        var outcome = Outcome()
        var random = SeededRandom(0x0B5E_0001)
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
        round: Int, record: Record, loop: Loop, random: inout SeededRandom, spin: AtomicInt, violations: Violations
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
