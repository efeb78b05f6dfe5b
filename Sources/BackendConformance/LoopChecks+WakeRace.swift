import RunLoopCore
import Synchronization

extension BackendConformance {
    /// How many pokes the wake race makes.
    static let wakeRaceRounds = 3_000

    /// Ping-pong between the loop and a poster on another thread: the poster signals a source
    /// (or posts a block), waits until the loop has handled it, and pokes again — so each poke
    /// races with the loop deciding to sleep. A lost wake leaves the loop asleep: the poster's
    /// wait for the answer runs out (the deadline, not a measurement, decides).
    static func loopWakeRace(_ context: Context) throws {
        let loop = try makeLoop(context)
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
        @Sendable func sinceOrigin() -> Int64 {
            let (seconds, attoseconds) = (ContinuousClock.now - origin).components
            return seconds * 1_000_000_000 + attoseconds / 1_000_000_000 + 1
        }
        let poster = try Helper {
            for round in 0..<wakeRaceRounds {
                pokedAt.store(sinceOrigin(), ordering: .releasing)
                // Every other poke is a block: a different path to the same wake.
                if round.isMultiple(of: 2) { source.signal() } else { loop.perform { answers.signal() } }
                guard answers.wait(for: context.deadline) else {
                    lost.withLock {
                        $0 =
                            $0
                            ?? "round \(round) of \(wakeRaceRounds) (\(round.isMultiple(of: 2) ? "signal" : "perform")) "
                            + "was not handled within \(context.deadline)"
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
            failure == nil && joined, "every one of \(wakeRaceRounds) cross-thread pokes to wake the loop",
            observed: failure ?? "the poster did not finish")
    }
}
