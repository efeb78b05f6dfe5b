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
        let poster = try Helper {
            for round in 0..<wakeRaceRounds {
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
            }
            finished.store(true, ordering: .releasing)
            loop.stop()
        }
        // Runs until the poster is done (it stops the run). The poster's deadline for each answer
        // is what finds a lost wake: the 3,000 round trips of one run may together take longer
        // than any deadline (under the Thread Sanitizer on a loaded machine they took over 30 s),
        // so a run's timeout says nothing about a single poke. The run's timeout, longer than the
        // poster's deadline, is a backstop only: a wake path broken altogether cannot hang the
        // check, and by the time it passes the poster has recorded the poke it waited for.
        while !finished.load(ordering: .acquiring) {
            loop.run(.default, timeout: context.deadline * 4)
        }
        let joined = poster.join(within: context.deadline * 2)
        let failure = lost.withLock { $0 }
        try expect(
            failure == nil && joined, "every one of \(wakeRaceRounds) cross-thread pokes to wake the loop",
            observed: failure ?? "the poster did not finish")
    }
}
