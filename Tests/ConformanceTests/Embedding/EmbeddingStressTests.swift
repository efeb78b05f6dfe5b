import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// The cross-thread window of the embedding API: a poster's work racing the host's prepare
/// (the loop publishing that it sleeps, through `SleepGate`, vs. a post looking whether it
/// does). Contract C2: no lost wakeups. Each poster posts once the host served its previous
/// post, so every post lands while the host dispatches, prepares or sleeps: a post whose wake
/// is lost leaves the host asleep with no deadline, which the host's own limit catches.
@Suite("Embedding stress")
struct EmbeddingStressTests {
    @Test(
        "posts racing the host's prepare are all served, each once, the host never stuck",
        arguments: embeddableBackends)
    func postsRacePrepare(_ kind: BackendKind) async throws {
        let posters = 2
        let rounds = scaled(3000, minimum: 100)
        let served = (0..<posters).map { _ in AtomicInt() }
        let misordered = AtomicInt()
        let outcome = try await onHostedLoop(kind) { loop, host in
            // A far timer keeps the mode alive: the host sleeps without deadline between posts.
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            let sources = (0..<posters).map { poster in
                Loop.Source { _ = served[poster].increment() }
            }
            for source in sources { loop.add(source, to: .default) }
            let gaveUp = AtomicInt()
            let threads = try (0..<posters).map { poster in
                try TestThread {
                    let end = ContinuousClock.now + generousDeadline
                    for round in 0..<rounds {
                        // Three kinds of work, each posted from this thread: a block, a signal,
                        // a timer due now.
                        switch round % 3 {
                        case 0:
                            loop.perform {
                                if served[poster].value != round { _ = misordered.increment() }
                                _ = served[poster].increment()
                            }
                        case 1:
                            sources[poster].signal()
                        default:
                            let timer = try! Loop.Timer(fireAt: .now) { _ in _ = served[poster].increment() }
                            loop.add(timer, to: .default)
                        }
                        while served[poster].value <= round {
                            guard ContinuousClock.now < end else {
                                _ = gaveUp.increment()
                                return
                            }
                            if round % 7 == 0 { sched_yield() }
                        }
                    }
                }
            }
            var stuck = 0
            let start = ContinuousClock.now
            while served.map(\.value).reduce(0, +) < posters * rounds,
                gaveUp.value == 0, ContinuousClock.now - start < generousDeadline
            {
                // Work is outstanding whenever the host waits here (the posters post again as
                // soon as they are served): a wait that reaches this limit was never woken.
                if host.iterate(limit: .seconds(20)) == .hostLimit { stuck += 1 }
            }
            let joined = threads.allSatisfy { $0.join() }
            return (stuck, joined, gaveUp.value, host.iterations)
        }
        #expect(outcome.0 == 0, "the host slept past its limit with work posted \(outcome.0) times")
        #expect(outcome.1)
        #expect(outcome.2 == 0)
        #expect(misordered.value == 0)
        for (poster, count) in served.enumerated() {
            #expect(count.value == rounds, "poster \(poster): every post served once")
        }
    }
}
