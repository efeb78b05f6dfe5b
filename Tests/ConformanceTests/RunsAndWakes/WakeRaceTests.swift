import Dispatch
import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › C2: No lost
/// wakeups — also between the loop's decision to sleep and the sleep itself.
///
/// Aimed at the waker's race window: the loop has no timer and no descriptor (only a
/// keep-alive version-0 source that is never signalled), so nothing but the wake itself can
/// end its sleep. A poster pokes it once and waits for the loop to react before poking again,
/// at varied moments: right after it noticed the loop's last reaction (the loop is finishing
/// its pass and deciding to sleep), after a delay swept over the loop's way back to sleep,
/// or once it sleeps. A lost wake leaves the loop asleep for good and shows as a missed
/// deadline (``generousDeadline`` per round).
@Suite("Waker race window")
struct WakeRaceTests {
    /// 100,000 rounds per way of waking at full scale.
    static let rounds = scaled(100_000, minimum: 1_000)

    /// Each block runs, and each signal is performed, exactly once; each wakeUp ends the
    /// loop's sleep (or the next one: a wakeUp landing while the loop is awake wakes its next
    /// sleep at once).
    @Test(
        "perform, signal, wakeUp: each wakes a loop asleep with no timer and no descriptor, with no spurious wakeup",
        arguments: backends, WakeRace.Poke.allCases)
    func eachPokeWakes(_ backend: BackendKind, _ poke: WakeRace.Poke) async throws {
        let outcome = try await offThePool {
            try WakeRace(backend: backend, poke: poke).run(rounds: Self.rounds)
        }
        #expect(
            outcome.missed == nil,
            "round \(outcome.missed ?? 0) of \(Self.rounds): the loop never reacted to \(poke) (a lost wake)")
        if poke == .wakeUp {
            #expect(outcome.reactions >= Self.rounds)
        } else {
            #expect(outcome.reactions == Self.rounds, "each \(poke) is served exactly once")
        }
        // Read by the loop's thread as it finishes; nil when it never did (a failing sentinel:
        // a thread left behind must not pass for a clean one).
        guard let report = outcome.report else {
            Issue.record("the loop's thread did not finish within \(generousDeadline) of being stopped")
            return
        }
        #expect(report.registeredDescriptors == 0)
        #expect(report.spuriousWakeups == 0)
    }
}

/// One loop, one poster, many rounds.
struct WakeRace: Sendable {
    enum Poke: Sendable, CaseIterable { case perform, signal, wakeUp }

    struct Outcome: Sendable {
        /// The first round whose poke the loop never reacted to, if any.
        var missed: Int?
        var reactions = 0
        /// What the loop's thread saw as it finished; `nil` when it never finished.
        var report: Report?
    }

    /// What the loop's thread reads once its run has returned.
    struct Report: Sendable {
        var registeredDescriptors: Int
        /// Nothing but the pokes ends a sleep here: a wait that ends without one is a lost
        /// wake's cousin (a wake meant for an earlier sleep that was not absorbed).
        var spuriousWakeups: UInt64
    }

    let backend: BackendKind
    let poke: Poke

    func run(rounds: Int) throws -> Outcome {
        let reactions = AtomicInt()
        let reacted = DispatchSemaphore(value: 0)
        let loopRef = Ref<Loop>()
        let source = Ref<Loop.Source>()
        let ready = Latch()
        let report = Ref<Report>()
        let failure = Ref<String>()
        let poke = self.poke
        let backend = self.backend
        let loopThread = try TestThread {
            defer { ready.open() }
            guard let loop = newLoop(backend, failure: failure) else { return }
            let keepAlive = Loop.Source {}
            loop.add(keepAlive, to: .default)
            let signalled = Loop.Source {
                reactions.increment()
                reacted.signal()
            }
            loop.add(signalled, to: .default)
            if poke == .wakeUp {
                loop.add(
                    Loop.Observer(activities: .afterWaiting) { _, _ in
                        reactions.increment()
                        reacted.signal()
                    }, to: .default)
            }
            source.value = signalled
            loopRef.value = loop
            // Poking starts once the run has begun: a wakeUp before it has no effect.
            loop.add(Loop.Observer(activities: .entry, repeats: false) { _, _ in ready.open() }, to: .default)
            _ = loop.run()
            keepAlive.invalidate()
            signalled.invalidate()
            report.value = Report(
                registeredDescriptors: loop.registeredDescriptorCount,
                spuriousWakeups: loop.statistics.wakeups[.spurious])
        }
        ready.wait()
        guard let loop = loopRef.value, let signalled = source.value else {
            loopThread.join()
            if let failure = failure.value { throw WakeRaceFailure(failure) }
            throw TestTimeout()
        }

        var outcome = Outcome()
        var random = SeededRandom(0x9E37_79B9_7F4A_7C15)
        for round in 0..<rounds {
            Self.vary(random.next(), loop: loop, delay: reactions)
            let before = reactions.value
            switch poke {
            case .perform:
                loop.perform {
                    reactions.increment()
                    reacted.signal()
                }
            case .signal: signalled.signal()
            case .wakeUp: loop.wakeUp()
            }
            let deadline = DispatchTime.now() + .nanoseconds(Int(generousDeadline.nanosecondsRoundedUp))
            while reactions.value <= before {
                // Extra signals (a wake that ended two sleeps) only cost an extra turn here.
                if reacted.wait(timeout: deadline) == .timedOut, reactions.value <= before {
                    outcome.missed = round
                    break
                }
            }
            if outcome.missed != nil { break }
        }
        loop.stop()
        // If a wake was lost the loop may never see this stop either: the thread is left behind.
        if loopThread.join(within: generousDeadline) { outcome.report = report.value }
        outcome.reactions = reactions.value
        return outcome
    }

    /// Picks the moment of the next poke, from the top bits of `pick` (a ``SeededRandom`` draw).
    private static func vary(_ pick: UInt64, loop: Loop, delay counter: AtomicInt) {
        switch pick >> 60 {
        case 0..<6:
            break // At once: the loop is still finishing the pass that reacted.
        case 6..<12:
            // A short delay, varied in small steps: sweeps the loop's way back to sleep
            // (publishing that it sleeps, the last look at its queues, the wait itself).
            for _ in 0..<((pick >> 40) & 0xFF) { _ = counter.value }
        case 12..<14:
            // Once it sleeps. Polled with short sleeps, not a spin, which would take the CPU
            // from the loop (and from the tests running alongside); bounded, as a loop may be
            // slow to get there.
            var polls = 0
            while !loop.isWaiting, polls < 100 {
                var pause = timespec(tv_sec: 0, tv_nsec: 10_000)
                nanosleep(&pause, nil)
                polls += 1
            }
        default:
            sched_yield()
        }
    }
}

/// Why a wake race could not start, as the test report shows it.
struct WakeRaceFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
