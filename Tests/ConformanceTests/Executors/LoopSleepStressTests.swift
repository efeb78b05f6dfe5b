import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// The race windows of `Loop.sleep(for:tolerance:)` and of `Task.sleep` on a loop: a
/// cancellation racing the timer's firing, a loop ending while sleeps are being armed, and
/// sleeps armed from many threads at once. Every sleep must end exactly once, with an outcome
/// its contract allows, and leave no timer behind. Sized by `RUNLOOPKIT_STRESS_SCALE`.
@Suite("Loop.sleep stress", .timeLimit(.minutes(10)))
struct LoopSleepStressTests {
    @Test(
        "a cancellation racing the timer: each sleep ends once, slept or cancelled, no timer left", arguments: backends)
    func cancelRacesFire(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "sleep-stress", backend: backend)
        let loop = worker.loop
        let rounds = scaled(2_000, minimum: 50)
        var outcomes = Outcomes()
        for round in 0..<rounds {
            // Delays of 0 to 49 µs land the cancellation before, during and after the firing.
            let sleeper = Task { try await loop.sleep(for: .microseconds(round % 50)) }
            if round % 3 != 0 { await Task.yield() }
            sleeper.cancel()
            outcomes.record(await sleeper.result)
        }
        #expect(outcomes.other == [])
        #expect(outcomes.slept + outcomes.cancelled == rounds)
        #expect(loop.timerCount(in: .default) == 0)
        try await offThePool { worker.stop() }
    }

    @Test("a loop ending while sleeps are armed: each sleep ends, slept or LoopEndedError", arguments: backends)
    func loopEndRacesArming(_ backend: BackendKind) async throws {
        let rounds = scaled(200, minimum: 20)
        var outcomes = Outcomes()
        for round in 0..<rounds {
            let worker = try LoopThread(name: "sleep-stress", backend: backend)
            let loop = worker.loop
            let sleepers = (0..<4).map { index in
                Task { try await loop.sleep(for: .microseconds((round + index) % 20)) }
            }
            try await offThePool { worker.stop() }
            for sleeper in sleepers { outcomes.record(await sleeper.result) }
        }
        #expect(outcomes.other == [])
        #expect(outcomes.cancelled == 0)
        #expect(outcomes.slept + outcomes.ended == rounds * 4)
    }

    /// The scenario of *a loop that ends while a task sleeps on it*: a task running on one
    /// loop's executor sleeps on another loop, which then ends. In two rounds of three the sleep
    /// must arm its timer before the loop ends; in the third the loop ends at once, racing the
    /// arming. Every sleep must end, with `LoopEndedError`. The first failing round ends the
    /// test (each waits up to the generous deadline, and a few would outlast the time limit).
    @Test(
        "a task on one loop sleeping on another that ends: each sleep is armed or not, and ends with LoopEndedError",
        arguments: backends)
    func sleepOnAnotherLoopThatEnds(_ backend: BackendKind) async throws {
        let rounds = scaled(2_000, minimum: 200)
        try await offThePool {
            let host = try LoopThread(name: "sleep-host", backend: backend)
            defer { host.stop() }
            var failure: String?
            var outcomes = Outcomes()
            for round in 0..<rounds {
                let worker = try LoopThread(name: "sleep-worker", backend: backend)
                let loop = worker.loop
                let ended = Latch()
                let outcome = Lock<Result<Void, any Error>?>(nil)
                let task = sleeper(on: host.loop, sleepingOn: loop)
                // On the host loop too: this body holds the thread its own task runs on.
                Task(executorPreference: host.loop) {
                    let result = await task.result
                    outcome.withLock { $0 = result }
                    ended.open()
                }
                if round % 3 != 2, !waitUntil({ loop.timerCount(in: .default) == 1 }) {
                    failure = "round \(round): the sleep's timer was not armed"
                }
                worker.stop()
                guard ended.wait(), let result = outcome.withLock({ $0 }) else {
                    failure = failure ?? "round \(round): the sleep did not end"
                    break
                }
                outcomes.record(result)
                if failure != nil { break }
            }
            #expect(failure == nil)
            #expect(outcomes.ended == rounds, "\(outcomes)")
        }
    }

    @Test("Task.sleep armed from many tasks at once on a loop: every task resumes on the loop", arguments: backends)
    func manyTaskSleeps(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "sleep-stress", backend: backend)
        let loop = worker.loop
        let tasks = scaled(2_000, minimum: 50)
        let before = loop.statistics.timerFires
        let onLoop = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<tasks {
                group.addTask(executorPreference: loop) {
                    try await Task.sleep(for: .microseconds(1 + index % 100), tolerance: .milliseconds(1))
                    return Loop.currentIfCreated === loop
                }
            }
            var onLoop = 0
            for try await resumedOnLoop in group where resumedOnLoop { onLoop += 1 }
            return onLoop
        }
        #expect(onLoop == tasks)
        #expect(loop.statistics.timerFires - before == UInt64(tasks))
        try await offThePool { worker.stop() }
    }
}

/// How sleeps ended.
private struct Outcomes {
    var slept = 0
    var cancelled = 0
    var ended = 0
    /// Anything else, described: must stay empty.
    var other: [String] = []

    mutating func record(_ result: Result<Void, any Error>) {
        switch result {
        case .success: slept += 1
        case .failure(let error) where error is CancellationError: cancelled += 1
        case .failure(let error) where error is LoopEndedError: ended += 1
        case .failure(let error): other.append("\(error)")
        }
    }
}
