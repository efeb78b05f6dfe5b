import RunLoopCore
import Synchronization

extension BackendConformance {
    /// How many pokes the wake race makes at full size.
    static let wakeRaceRounds = 3_000
    /// Every this many rounds, from the first, the poke is made once the loop is in a wait that
    /// may sleep: an odd number, so that those pokes are signals and blocks in turn.
    static let wakeRaceSleepingEvery = 33

    /// Ping-pong between the loop and a poster on another thread: the poster signals a source
    /// (or posts a block), waits until the loop has handled it, and pokes again — so each poke
    /// races with the loop deciding to sleep. A lost wake leaves the loop asleep: the poster's
    /// wait for the answer runs out (the deadline, not a measurement, decides).
    ///
    /// The first poke, and every ``wakeRaceSleepingEvery``th after it, is made once the loop is
    /// inside the backend's wait (past its last look for work), where only the waker can reach
    /// it: pokes made at random moments may all land while the loop is awake, these cannot. A
    /// waker that does nothing is caught on the first (a signal: the loop notices it slept
    /// through it), unless the poster is held up for half a deadline between seeing the loop
    /// asleep and poking; then on a later one.
    static func loopWakeRace(_ context: Context) throws {
        let watched = Lock<SleepWatchingBackend?>(nil)
        let loop = try makeLoop(
            Context(
                factory: SleepWatchingBackend.factory(over: context.factory, keeping: watched),
                deadline: context.deadline))
        guard let backend = watched.withLock({ $0 }) else {
            throw Mismatch(expected: "the loop to be made by the check's factory", observed: "it was not")
        }
        let answers = Handshake()
        let source = Loop.Source { answers.signal() }
        loop.add(source, to: .default)
        defer { source.invalidate() }
        let lost = Lock<String?>(nil)
        let finished = Atomic<Bool>(false)
        // When the poke the poster waits for was made (nanoseconds since `origin`, 0 when none
        // is waiting): what tells a run that slept through a poke from one that was simply long.
        let origin = ContinuousClock.now
        let pokedAt = Atomic<Int64>(0)
        let rounds = Int((Double(wakeRaceRounds) * context.stressScale).rounded())
        @Sendable func sinceOrigin() -> Int64 {
            let (seconds, attoseconds) = (ContinuousClock.now - origin).components
            return seconds * 1_000_000_000 + attoseconds / 1_000_000_000 + 1
        }
        let poster = try Helper {
            // Cleared when the loop did not go to sleep within a deadline once: a loop that never
            // sleeps is not this check's failure, and waiting for it again would outlast the
            // check's limit.
            var watchesSleeps = true
            for round in 0..<rounds {
                var whileAsleep = false
                if watchesSleeps, round % wakeRaceSleepingEvery == 0 {
                    whileAsleep = backend.waitUntilSleeping(for: context.deadline)
                    watchesSleeps = whileAsleep
                }
                pokedAt.store(sinceOrigin(), ordering: .releasing)
                // Every other poke is a block: a different path to the same wake.
                if round.isMultiple(of: 2) { source.signal() } else { loop.perform { answers.signal() } }
                guard answers.wait(for: context.deadline) else {
                    lost.withLock {
                        $0 =
                            $0
                            ?? "round \(round) of \(rounds) (\(round.isMultiple(of: 2) ? "signal" : "perform")"
                            + "\(whileAsleep ? ", made while the loop slept" : "")) was not handled within \(context.deadline)"
                    }
                    break
                }
                pokedAt.store(0, ordering: .releasing)
            }
            finished.store(true, ordering: .releasing)
            loop.stop()
        }
        // Runs until the poster is done. Each run returns after the first source it handles (a
        // signal poke, every other round), so a run lasts a round trip or two however many rounds
        // there are: one that times out went a whole deadline without handling a poke. It slept
        // through one if a poke had been waiting for at least half of that deadline (not one made
        // just before the timeout, nor none: a poster that was not scheduled).
        let half = context.deadline / 2
        let (halfSeconds, halfAttoseconds) = half.components
        let halfNanoseconds = halfSeconds * 1_000_000_000 + halfAttoseconds / 1_000_000_000
        while !finished.load(ordering: .acquiring) {
            let result = loop.run(.default, timeout: context.deadline, returnAfterSourceHandled: true)
            guard result == .timedOut else { continue }
            let poked = pokedAt.load(ordering: .acquiring)
            if poked != 0, sinceOrigin() - poked >= halfNanoseconds, !finished.load(ordering: .acquiring) {
                lost.withLock { $0 = $0 ?? "the loop slept \(context.deadline) while a poke was pending" }
                break
            }
        }
        let joined = poster.join(within: context.deadline * 2)
        let failure = lost.withLock { $0 }
        try expect(
            failure == nil && joined, "every one of \(rounds) cross-thread pokes to wake the loop",
            observed: failure ?? "the poster did not finish")
    }
}
