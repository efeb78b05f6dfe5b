import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Rule E3: a task whose executor is a loop never waits for ever when the loop ends. Its jobs run
/// on one serial executor standing for the ended loop (never inline, one at a time, in order,
/// `checkIsolated` passing there), and the API it awaited reports the end.
@Suite("Tasks on a loop that ends (E3)")
struct EndedLoopExecutorTests {
    /// How long a task may take to resume here: the suite's own deadline, since the whole suite in
    /// parallel can hold the cooperative pool, which these tests' awaits need, for minutes.
    static let resumeDeadline: Duration = generousDeadline

    @Test(
        "a task preferring the loop, asleep on it with Loop.sleep when it ends, resumes with LoopEndedError",
        arguments: backends)
    func loopSleep(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "ending", backend: backend)
        let loop = worker.loop
        let sleeper = Task(executorPreference: loop) { () -> String in
            do {
                try await loop.sleep(for: .seconds(3600))
                return "slept"
            } catch {
                return "\(type(of: error))"
            }
        }
        #expect(await eventually(within: Self.resumeDeadline) { loop.timerCount(in: .default) == 1 })
        await worker.finish()
        #expect(await value(of: sleeper, within: Self.resumeDeadline) == "LoopEndedError")
    }

    @Test(
        "a task preferring the loop, awaiting another loop's submit when it ends, resumes off the loop's thread; a later submit to the ended loop is refused",
        arguments: backends)
    func submitElsewhere(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "ending", backend: backend)
        let other = try LoopThread(name: "other", backend: backend)
        defer { other.stop() }
        let loop = worker.loop
        let gate = Latch()
        // The other loop is held until the worker has ended.
        other.loop.perform { _ = gate.wait(for: Self.resumeDeadline) }
        let asked = Latch()
        let task = Task(executorPreference: loop) { () -> [String] in
            asked.open()
            // This job runs on the worker's thread: the worker's stop is queued behind it, so the
            // task is suspended here before the worker ends.
            let answer = try? await other.loop.submit { 7 }
            let onLoopThread = Loop.currentIfCreated === loop
            var refused = "not refused"
            do { _ = try await loop.submit { 8 } } catch { refused = "\(error)" }
            return ["answer \(answer.map(String.init) ?? "none")", "on loop thread \(onLoopThread)", refused]
        }
        #expect(await asked.waitOffPool(for: Self.resumeDeadline))
        await worker.finish()
        gate.open()
        let outcome = await value(of: task, within: Self.resumeDeadline)
        #expect(outcome?[0] == "answer 7")
        #expect(outcome?[1] == "on loop thread false")
        #expect(outcome?[2] == "\(SubmitError.refused)")
    }

    @Test("a task preferring the loop, in Task.sleep when the loop ends, resumes at its deadline", arguments: backends)
    func taskSleep(_ backend: BackendKind) async throws {
        // Off the cooperative pool, which the suite may keep busy for longer than the sleep: the
        // loop must end while the task sleeps, which the test checks.
        let (sleeper, deadline, endedFirst) = try await offThePool {
            () throws -> (Task<String, Never>, ContinuousClock.Instant, Bool) in
            let worker = try LoopThread(name: "ending", backend: backend)
            let loop = worker.loop
            let timers = loop.timerCount(in: .default)
            let deadline = ContinuousClock.now + .seconds(3)
            let sleeper = Task(executorPreference: loop) { () -> String in
                do {
                    try await Task.sleep(until: deadline, clock: .continuous)
                    return ContinuousClock.now >= deadline ? "slept to its deadline" : "woke early"
                } catch {
                    return "\(error)"
                }
            }
            let armed = waitUntil(within: .seconds(2)) { loop.timerCount(in: .default) == timers + 1 }
            worker.stop()
            return (sleeper, deadline, armed && ContinuousClock.now < deadline)
        }
        #expect(endedFirst, "the loop did not end while the task slept: the test showed nothing")
        #expect(await value(of: sleeper, within: Self.resumeDeadline) == "slept to its deadline")
        #expect(ContinuousClock.now >= deadline)
    }

    @Test(
        "a task preferring the loop, waiting for a port's next message on it when it ends, resumes with loopEnded",
        arguments: backends)
    func portSequence(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "ending", backend: backend)
        let loop = worker.loop
        let port = try Loop.Port<Int>()
        defer { port.close() }
        let waiting = Latch()
        var messages = port.messages(on: loop)
        messages.onWaiting = { waiting.open() }
        let consumer = Task(executorPreference: loop) { [messages] () -> String in
            do {
                for try await message in messages { return "got \(message)" }
                return "finished"
            } catch {
                return "\(error)"
            }
        }
        #expect(await waiting.waitOffPool(for: Self.resumeDeadline))
        await worker.finish()
        #expect(await value(of: consumer, within: Self.resumeDeadline) == "\(LoopSequenceError.loopEnded)")
    }

    @Test(
        "after the end, an actor on the loop runs its jobs one at a time, off the enqueuing thread, with checkIsolated passing",
        arguments: backends)
    func actorAfterEnd(_ backend: BackendKind) async throws {
        let worker = try LoopThread(name: "ending", backend: backend)
        let counter = StepActor(loop: worker.loop)
        await worker.finish()
        let callers = 8
        let calls = 50
        try await within(Self.resumeDeadline) {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<callers {
                    // Preferring the ended loop, the callers' own jobs run on its executor too: no
                    // hop through the cooperative pool, which other tests may keep busy.
                    group.addTask(executorPreference: worker.loop) {
                        for _ in 0..<calls { await counter.step() }
                    }
                }
            }
        }
        #expect(await counter.steps == callers * calls)
        #expect(await counter.overlaps == 0, "two jobs of the ended loop's executor ran at once")
        // The first job of a task preferring the ended loop is enqueued by Task.init on this
        // thread; it must not run there, inside the call.
        let enqueuer = Lock<pthread_t?>(nil)
        let started = try await offThePool { () throws -> Task<pthread_t, Never> in
            enqueuer.withLock { $0 = pthread_self() }
            return Task(executorPreference: worker.loop) { pthread_self() }
        }
        let ranOn = await value(of: started, within: Self.resumeDeadline)
        #expect(ranOn != nil)
        #expect(ranOn != enqueuer.withLock { $0 }, "the job ran inline, in the call that enqueued it")
    }
}

/// The window of E3: jobs reaching a loop while it ends — queued before, refused while its
/// `LoopThread` stops, dropped at teardown, enqueued after.
@Suite("Tasks on a loop that ends (E3): stress")
struct EndedLoopExecutorStressTests {
    @Test(
        "tasks hopping onto a loop while it ends all finish, their jobs never running two at a time",
        arguments: backends)
    func hopsWhileEnding(_ backend: BackendKind) async throws {
        let rounds = scaled(40, minimum: 4)
        var waitingRound: Int?
        var overlaps = 0
        for round in 0..<rounds {
            let worker = try LoopThread(name: "ending", backend: backend)
            let counter = StepActor(loop: worker.loop)
            let tasks = (0..<16).map { _ in
                Task(executorPreference: worker.loop) { () -> Int in
                    for _ in 0..<25 {
                        await counter.step()
                        await Task.yield()
                    }
                    return 1
                }
            }
            // The end lands anywhere in the tasks' hops, from before the first to after the last.
            for _ in 0..<(round % 8 * 50) { sched_yield() }
            await worker.finish()
            // One deadline for the round's tasks together; the first round with a task left waiting
            // ends the test.
            let all = Task { for task in tasks { _ = await task.value } }
            guard await value(of: all, within: EndedLoopExecutorTests.resumeDeadline) != nil else {
                waitingRound = round
                break
            }
            overlaps += await counter.overlaps
        }
        #expect(waitingRound == nil, "round \(waitingRound ?? -1) left tasks waiting for an ended loop")
        #expect(overlaps == 0, "jobs of the loop and of its ended executor ran at once")
    }
}

/// An actor whose executor is a loop; `step` notes any overlap with another of its jobs, and calls
/// `checkIsolated` (which traps off the loop's thread and outside the ended loop's executor).
actor StepActor {
    let loop: Loop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    private let inside = Atomic<Int>(0)
    private(set) var steps = 0
    private(set) var overlaps = 0

    init(loop: Loop) { self.loop = loop }

    func step() {
        loop.checkIsolated()
        if inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 { overlaps += 1 }
        // Long enough for another thread to run a job beside this one, were it allowed to.
        for _ in 0..<20 { sched_yield() }
        steps += 1
        inside.subtract(1, ordering: .sequentiallyConsistent)
    }
}
