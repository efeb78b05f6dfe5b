import RunLoopKit
import TestSupport
import Testing

// Hunts the window of `descriptorsChanged` (`PassHints`): descriptor sources added and removed
// from another thread while a pass skips syncing the backend's registrations, the loop sleeps,
// or it switches modes.
// Guards [W4] (changes from another thread) and [D7] (a removal reaches the kernel before it
// returns), Sources/Core/RunLoopKit.docc/BehaviourContract.md.

extension HotPathRaceTests {
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
        try await churnDescriptors(backend, alternating: false, rounds: scaled(1_500, minimum: 60))
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
        try await churnDescriptors(backend, alternating: true, rounds: scaled(800, minimum: 40))
    }

    /// Plays the descriptor race for `rounds` rounds, off the cooperative pool (its posters
    /// block): every round ends in time, with no violation, and the loop ends clean.
    private func churnDescriptors(_ backend: BackendKind, alternating: Bool, rounds: Int) async throws {
        let outcome = try await offThePool {
            try DescriptorRace(backend: backend, alternating: alternating).run(rounds: rounds)
        }
        #expect(outcome.missed == nil, "round \(outcome.missed ?? 0) of \(rounds): \(outcome.why)")
        #expect(outcome.violations.isEmpty, "\(outcome.violationCount) violations, the first: \(outcome.violations)")
        expectClean(outcome.report)
    }
}

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
        var random = SeededRandom(alternating ? 0xFD00_0002 : 0xFD00_0001)
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
