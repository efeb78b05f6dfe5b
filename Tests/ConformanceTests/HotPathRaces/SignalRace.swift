import RunLoopKit
import TestSupport
import Testing

// Hunts the window of `maybeSignalled` (`PassHints`): a source signalled while the loop, without
// its lock, skips its signalled sources or clears the flag over a list it found empty.
// Guards [S1] (signalling: signals coalesce, a signalled source is performed) and [C2] (no lost
// wakeups), Sources/Core/RunLoopKit.docc/BehaviourContract.md.

extension HotPathRaceTests {
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
        let outcome = try await offThePool { try SignalRace(backend: backend).run(bursts: bursts) }
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
}

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
        var random = SeededRandom(0x5EED_0001)
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
