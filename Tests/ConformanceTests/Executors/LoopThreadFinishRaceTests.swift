import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// `LoopThread.finish()` racing `perform`, other `finish()` calls and `stop()` (rules E2, L4).
///
/// Windows: a `perform` that reads "not stopping" as `finish()` queues the finishing block (it
/// must be refused, or run before the end); the end signal given by the joining thread as
/// another task registers to wait for it (that task must still return); a `stop()` that finds
/// `finish()` already joining (it must not join twice nor strand the finish). In each round
/// three posters call `perform` until refused, while two tasks call `finish()` and, every
/// third round, a thread calls `stop()`; a third `finish()` starts when the first returns.
///
/// Catches: a block accepted but run after `finish()` returned, or never; a `finish()` that
/// never returns (the round names it); a refused block that runs.
@Suite("LoopThread: finish racing perform and stop")
struct LoopThreadFinishRaceTests {
    @Test(
        "finish() racing posters, other finishes and stop(): every accepted block runs before it returns",
        arguments: backends)
    func finishRacingPerform(_ backend: BackendKind) async throws {
        let rounds = scaled(300, minimum: 30)
        var violations: [String] = []
        var roundsPlayed = 0
        for round in 1...rounds {
            let worker = try LoopThread(name: "finish-race", backend: backend)
            let returned = Atomic<Bool>(false)
            let accepted = AtomicInt()
            let ranInTime = AtomicInt()
            let ranLate = AtomicInt()
            let refusedRan = AtomicInt()
            let posting = AtomicInt()
            let everyonePosting = Latch()
            var posters: [TestThread] = []
            for poster in 0..<3 {
                posters.append(
                    try TestThread {
                        var waits = poster == 0
                        while true {
                            let refused = Atomic<Bool>(false)
                            let ok = worker.perform(waitUntilDone: waits) {
                                if refused.load(ordering: .acquiring) { refusedRan.increment() }
                                if returned.load(ordering: .acquiring) {
                                    ranLate.increment()
                                } else {
                                    ranInTime.increment()
                                }
                            }
                            if posting.value < 3, posting.increment() == 3 { everyonePosting.open() }
                            guard ok else {
                                refused.store(true, ordering: .releasing)
                                break
                            }
                            accepted.increment()
                            waits.toggle()
                        }
                    })
            }
            if round % 2 == 0 { everyonePosting.wait() }
            let stopper = round % 3 == 0 ? try TestThread { worker.stop() } : nil
            let first = Task {
                await worker.finish()
                returned.store(true, ordering: .releasing)
                // Started as the end is signalled: it must return too.
                await worker.finish()
                return true
            }
            let second = Task {
                await worker.finish()
                return true
            }
            let firstReturned = await value(of: first) ?? false
            let secondReturned = await value(of: second) ?? false
            let postersDone = posters.allSatisfy { $0.join() }
            let stopperDone = stopper?.join() ?? true
            guard firstReturned, secondReturned, postersDone, stopperDone else {
                violations.append(
                    "round \(round): finish returned \(firstReturned), \(secondReturned); posters done \(postersDone); stop done \(stopperDone)"
                )
                break
            }
            roundsPlayed += 1
            if ranInTime.value != accepted.value || ranLate.value != 0 || refusedRan.value != 0 {
                violations.append(
                    "round \(round): \(accepted.value) accepted, \(ranInTime.value) ran before finish returned, \(ranLate.value) after, \(refusedRan.value) refused blocks ran"
                )
            }
        }
        #expect(violations.isEmpty, "\(violations.prefix(5))")
        #expect(roundsPlayed == rounds)
    }
}
