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
        try await withWorker(LoopThread(name: "sleep", backend: backend)) { worker in
            let before = worker.loop.statistics.timerFires
            try await within(generousDeadline) {
                try await worker.loop.sleep(for: .milliseconds(2), tolerance: .milliseconds(1))
            }
            #expect(worker.loop.statistics.timerFires == before + 1)
            #expect(worker.loop.timerCount(in: .default) == 0)
        }
    }

    @Test(
        "a sleep cancelled while it waits throws CancellationError and its timer leaves the loop", arguments: backends)
    func cancelledWhileWaiting(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(name: "sleep", backend: backend)) { worker in
            let outcome = try await armedSleep(on: worker.loop, backend, endedBy: { $0.cancel() })
            #expect(throws: CancellationError.self) { try outcome.get() }
            #expect(worker.loop.timerCount(in: .default) == 0)
        }
    }

    @Test("a sleep in a task cancelled before it began throws CancellationError and arms nothing", arguments: backends)
    func cancelledBefore(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(name: "sleep", backend: backend)) { worker in
            let sleeper = Task {
                // The task cancels itself, so it is cancelled before the sleep begins.
                withUnsafeCurrentTask { $0?.cancel() }
                try await worker.loop.sleep(for: .seconds(3600))
            }
            let outcome = try await within(generousDeadline) { await sleeper.result }
            #expect(throws: CancellationError.self) { try outcome.get() }
            #expect(worker.loop.timerCount(in: .default) == 0)
        }
    }

    @Test("a loop that ends while a task sleeps on it ends the sleep with LoopEndedError", arguments: backends)
    func loopEndsWhileSleeping(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "sleep", backend: backend)
        let outcome = try await armedSleep(on: worker.loop, backend, endedBy: { _ in worker.stop() })
        #expect(throws: LoopEndedError.self) { try outcome.get() }
    }

    @Test("a sleep on a loop that has ended throws LoopEndedError at once", arguments: backends)
    func loopAlreadyEnded(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "sleep", backend: backend)
        let loop = worker.loop
        worker.stop()
        await #expect(throws: LoopEndedError.self) {
            try await within(generousDeadline) { try await loop.sleep(for: .seconds(3600)) }
        }
    }

    @Test("a negative tolerance is refused, naming it", arguments: backends)
    func negativeTolerance(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(name: "sleep", backend: backend)) { worker in
            await #expect(throws: ArgumentError.self) {
                try await within(generousDeadline) {
                    try await worker.loop.sleep(for: .milliseconds(1), tolerance: .milliseconds(-1))
                }
            }
        }
    }
}

/// Starts a task sleeping an hour on `loop` (``sleeper(on:sleepingOn:)``), expects its timer to
/// be armed, ends the sleep with `end` and returns how it ended.
///
/// The sleeper runs on a loop of its own, not on Swift's cooperative pool, which the suite's
/// other tests may keep busy for longer than the deadline.
private func armedSleep(
    on loop: Loop, _ backend: BackendKind, endedBy end: (Task<Void, any Error>) -> Void
) async throws -> Result<Void, any Error> {
    let host = try LoopThread(name: "sleeper", backend: backend)
    defer { host.stop() }
    let sleeper = sleeper(on: host.loop, sleepingOn: loop)
    #expect(
        await eventually(within: generousDeadline) { loop.timerCount(in: .default) == 1 }, "the sleep's timer is armed")
    end(sleeper)
    return try await within(generousDeadline) { await sleeper.result }
}

/// A task on `host`'s executor that sleeps an hour on `loop`.
///
/// When its timer is armed is a state a test cannot be told about, and must look for
/// (`loop.timerCount(in: .default)`). Two events tried first did not order it, measured here: a
/// block queued on `host` just after `Task.init` returned ran before the task had started, and
/// a block the task queued just before calling `sleep` ran before the timer was armed. An
/// observer of the sleeping loop is not called again when a timer is added between its
/// `beforeWaiting` observers and its decision to sleep (it then sleeps until the timer,
/// rightly): a test that waited for it waited in vain.
func sleeper(on host: Loop, sleepingOn loop: Loop) -> Task<Void, any Error> {
    Task(executorPreference: host) { try await loop.sleep(for: .seconds(3600)) }
}
