import RunLoopKit
import TestSupport
import Testing

/// `Loop.sleep(for:tolerance:)`: a task sleeps on a timer of a loop; cancellation removes the
/// timer and throws at once; a loop that ends first ends the sleep with `LoopEndedError`. Each
/// test owns its loop (a `LoopThread`).
@Suite("Loop.sleep")
struct LoopSleepTests {
    @Test("a sleep fires one timer of the loop, then the task goes on", arguments: backends)
    func firesOneTimer(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "sleep", backend: backend)
        defer { worker.stop() }
        let before = worker.loop.statistics.timerFires
        try await worker.loop.sleep(for: .milliseconds(2), tolerance: .milliseconds(1))
        #expect(worker.loop.statistics.timerFires == before + 1)
        #expect(worker.loop.timerCount(in: .default) == 0)
    }

    @Test(
        "a sleep cancelled while it waits throws CancellationError and its timer leaves the loop", arguments: backends)
    func cancelledWhileWaiting(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "sleep", backend: backend)
        defer { worker.stop() }
        let armed = armedLatch(on: worker.loop)
        // The sleeper runs on a loop of its own, not on Swift's cooperative pool, which the
        // suite's other tests may keep busy for longer than the latch's deadline.
        let host = try LoopThread(name: "sleeper", backend: backend)
        defer { host.stop() }
        let sleeper = Task(executorPreference: host.loop) { try await worker.loop.sleep(for: .seconds(3600)) }
        #expect(await armed.waitOffPool())
        sleeper.cancel()
        let outcome = await sleeper.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(worker.loop.timerCount(in: .default) == 0)
    }

    @Test("a sleep in a task cancelled before it began throws CancellationError and arms nothing", arguments: backends)
    func cancelledBefore(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "sleep", backend: backend)
        defer { worker.stop() }
        let sleeper = Task {
            // The task cancels itself, so it is cancelled before the sleep begins.
            withUnsafeCurrentTask { $0?.cancel() }
            try await worker.loop.sleep(for: .seconds(3600))
        }
        let outcome = await sleeper.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(worker.loop.timerCount(in: .default) == 0)
    }

    @Test("a loop that ends while a task sleeps on it ends the sleep with LoopEndedError", arguments: backends)
    func loopEndsWhileSleeping(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "sleep", backend: backend)
        let armed = armedLatch(on: worker.loop)
        // The sleeper runs on a loop of its own, not on Swift's cooperative pool, which the
        // suite's other tests may keep busy for longer than the latch's deadline.
        let host = try LoopThread(name: "sleeper", backend: backend)
        defer { host.stop() }
        let sleeper = Task(executorPreference: host.loop) { try await worker.loop.sleep(for: .seconds(3600)) }
        #expect(await armed.waitOffPool())
        worker.stop()
        let outcome = await sleeper.result
        #expect(throws: LoopEndedError.self) { try outcome.get() }
    }

    @Test("a sleep on a loop that has ended throws LoopEndedError at once", arguments: backends)
    func loopAlreadyEnded(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "sleep", backend: backend)
        let loop = worker.loop
        worker.stop()
        await #expect(throws: LoopEndedError.self) { try await loop.sleep(for: .seconds(3600)) }
    }

    @Test("a negative tolerance is refused, naming it", arguments: backends)
    func negativeTolerance(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "sleep", backend: backend)
        defer { worker.stop() }
        await #expect(throws: ArgumentError.self) {
            try await worker.loop.sleep(for: .milliseconds(1), tolerance: .milliseconds(-1))
        }
    }
}

/// A latch opened once `loop` holds a timer in its default mode, checked on the loop's thread
/// each time it is about to sleep (adding a timer to a loop sleeping without a deadline wakes
/// it).
func armedLatch(on loop: Loop) -> Latch {
    let armed = Latch()
    loop.add(
        Loop.Observer(activities: .beforeWaiting) { observer, _ in
            if loop.timerCount(in: .default) > 0 {
                armed.open()
                observer.invalidate()
            }
        }, to: .default)
    return armed
}
