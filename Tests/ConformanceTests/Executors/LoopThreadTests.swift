import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Worker threads, loops as executors, and delayed performs.
@Suite("LoopThread, executors and delayed perform")
struct LoopThreadTests {
    @Test("perform(waitUntilDone:) returns after the block ran on the thread's loop", arguments: backends)
    func performWaits(_ backend: BackendKind) async throws {
        try await offThePool {
            let worker = try LoopThread(backend: backend)
            let ranOn = Lock<Loop?>(nil)
            worker.perform(waitUntilDone: true) { ranOn.withLock { $0 = Loop.currentIfCreated } }
            #expect(ranOn.withLock { $0 } === worker.loop)
            #expect(worker.loop.backend == backend)
            worker.stop()
        }
    }

    @Test("stop() runs every block posted before it, then joins; later posts are refused", arguments: backends)
    func stopLosesNothing(_ backend: BackendKind) async throws {
        try await offThePool {
            let worker = try LoopThread(backend: backend)
            let count = Atomic<Int>(0)
            for _ in 0..<10_000 { worker.perform { count.add(1, ordering: .relaxed) } }
            worker.stop()
            #expect(count.load(ordering: .relaxed) == 10_000)
            #expect(worker.perform { count.add(1, ordering: .relaxed) } == false)
            worker.stop() // A second stop has no effect.
            #expect(count.load(ordering: .relaxed) == 10_000)
        }
    }

    @Test("dropping the last reference stops the thread without losing blocks", arguments: backends)
    func deinitStops(_ backend: BackendKind) async throws {
        try await offThePool {
            let count = Atomic<Int>(0)
            do {
                let worker = try LoopThread(backend: backend)
                for _ in 0..<100 { worker.perform { count.add(1, ordering: .relaxed) } }
            }
            #expect(count.load(ordering: .relaxed) == 100)
        }
    }

    @Test("an actor whose executor is a worker loop runs on that loop's thread", arguments: backends)
    func actorOnLoop(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let counter = LoopBoundCounter(loop: worker.loop)
            var onLoopThread: [Bool] = []
            for _ in 0..<5 { onLoopThread.append(await counter.increment()) }
            #expect(onLoopThread == Array(repeating: true, count: 5))
            #expect(await counter.value == 5)
        }
    }

    @Test("a task with a loop as its executor preference runs on the loop's thread", arguments: backends)
    func taskExecutorPreference(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let loop = worker.loop
            let onThread = await Task(executorPreference: loop) { Loop.currentIfCreated === loop }.value
            #expect(onThread)
        }
    }

    @Test("a delayed perform in a mode that is not running waits for that mode", arguments: backends)
    func delayedPerformWaitsForMode(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.perform(after: .zero, in: ["other"]) { trace("delayed in \(loop.currentMode!)") }
            loop.add(try recordingTimer("default timer", after: .milliseconds(5), into: trace), to: .default)
            trace("default: \(loop.run(timeout: generousDeadline))")
            trace("other: \(loop.run("other", timeout: generousDeadline))")
        }
        #expect(trace.all == ["default timer", "default: finished", "delayed in other", "other: finished"])
    }

    @Test("a delayed perform is cancelled through the timer it returns", arguments: backends)
    func delayedPerformCancelled(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let cancelled = loop.perform(after: .milliseconds(1)) { trace("cancelled block") }
            loop.perform(after: .milliseconds(2)) { trace("kept block") }
            cancelled.invalidate()
            trace("\(loop.run(timeout: generousDeadline))")
        }
        #expect(trace.all == ["kept block", "finished"])
    }
}

/// An actor pinned to a loop: its methods run on that loop's thread.
actor LoopBoundCounter {
    let loop: Loop
    var value = 0

    init(loop: Loop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// Counts, and says whether it ran on the loop's thread.
    func increment() -> Bool {
        value += 1
        return Loop.currentIfCreated === loop
    }
}
