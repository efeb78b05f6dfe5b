import RunLoopKit
import TestSupport
import Testing

/// `Task.sleep` on a loop's timers (Swift 6.3's `SchedulingExecutor`): proven, not assumed, by
/// the loop's timer count and by the thread the task resumes on. Which sleeps reach the loop:
/// those of tasks that prefer it as their executor; not those of a task isolated to an actor
/// whose executor is the loop (the runtime asks the default executor then).
@Suite("Task.sleep on loop timers")
struct TaskSleepTests {
    @Test("Task.sleep in a task preferring the loop fires one timer of it and resumes there", arguments: backends)
    func continuousClockSleepUsesLoopTimer(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(name: "sleep", backend: backend)) { worker in
            let loop = worker.loop
            let before = loop.statistics.timerFires
            let resumedOnLoop = try await within(generousDeadline) {
                try await Task(executorPreference: loop) {
                    try await Task.sleep(for: .milliseconds(2), tolerance: .milliseconds(1))
                    return Loop.currentIfCreated === loop
                }.value
            }
            #expect(resumedOnLoop)
            #expect(loop.statistics.timerFires == before + 1)
        }
    }

    @Test("Task.sleep on the SuspendingClock in a task preferring the loop fires one timer of it", arguments: backends)
    func suspendingClockSleepUsesLoopTimer(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(name: "sleep", backend: backend)) { worker in
            let loop = worker.loop
            let before = loop.statistics.timerFires
            let deadline = SuspendingClock.now + .milliseconds(2)
            let woke = try await within(generousDeadline) {
                try await Task(executorPreference: loop) {
                    try await Task.sleep(until: deadline, tolerance: .milliseconds(1), clock: .suspending)
                    return (SuspendingClock.now, Loop.currentIfCreated === loop)
                }.value
            }
            #expect(woke.1)
            #expect(woke.0 >= deadline)
            #expect(loop.statistics.timerFires == before + 1)
        }
    }

    @Test(
        "Task.sleep in an actor whose executor is the loop, without the preference, does not reach it",
        arguments: backends)
    func actorWithoutPreferenceIsNotRouted(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(name: "sleep", backend: backend)) { worker in
            let loop = worker.loop
            let before = loop.statistics.timerFires
            let resumedOnLoop = try await within(generousDeadline) { try await LoopActor(loop).sleep() }
            #expect(resumedOnLoop)
            #expect(loop.statistics.timerFires == before)
        }
    }

    @Test(
        "main-actor code on Loop.main (LoopExecutorFactory): Task.sleep reaches the main loop only when preferring it",
        arguments: backends)
    func mainActorSleeps(_ backend: BackendKind) async throws {
        #expect(
            try await runMainLoopFixture(backend, "main-actor-sleep") == [
                "Task.sleep: 0 loop timer(s)",
                "Task.sleep preferring Loop.main: 1 loop timer(s)",
                "Loop.main.sleep: 1 loop timer(s), on main: true",
            ])
    }

    @Test("a cancelled Task.sleep's pending job does not keep a mode alive", arguments: backends)
    func cancelledSleepDoesNotKeepModeAlive(_ backend: BackendKind) async throws {
        try await offThePool {
            let results = Lines()
            let thread = try TestThread {
                let loop = try! Loop.current(backend: backend)
                let sleeper = Task(executorPreference: loop) {
                    do {
                        try await Task.sleep(for: .seconds(3600))
                        results.lines.withLock { $0.append("slept") }
                    } catch {
                        results.lines.withLock { $0.append("sleeper \(type(of: error))") }
                    }
                }
                // The task's first job runs, arms the sleep's timer, and the run has nothing else.
                let first = loop.run(.default, timeout: generousDeadline)
                results.lines.withLock { $0 += ["first \(first)", "armed \(loop.timerCount(in: .default))"] }
                sleeper.cancel()
                // The task resumes (a job queued for the loop) and ends; the sleep's timer stays, and
                // the run does not wait for it.
                let second = loop.run(.default, timeout: generousDeadline)
                results.lines.withLock { $0 += ["second \(second)", "left \(loop.timerCount(in: .default))"] }
            }
            #expect(thread.join())
            #expect(
                results.lines.withLock { $0 } == [
                    "first finished", "armed 1", "sleeper CancellationError", "second finished", "left 1",
                ])
        }
    }
}

/// Lines a test's threads and tasks append to.
private final class Lines: Sendable {
    let lines = Lock<[String]>([])
}

extension LoopActor {
    /// Sleeps, and tells whether it resumed on the loop's thread (the actor's).
    fileprivate func sleep() async throws -> Bool {
        try await Task.sleep(for: .milliseconds(2))
        return Loop.currentIfCreated === loop
    }
}
