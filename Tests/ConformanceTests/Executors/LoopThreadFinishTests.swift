import Foundation
import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Rule E2 › `LoopThread.finish()`: the async end of a worker thread. It runs every block posted
/// before it, refuses later ones, returns once the thread ended (its loop torn down), and never
/// holds the awaiting task's thread meanwhile.
@Suite("LoopThread.finish()")
struct LoopThreadFinishTests {
    @Test(
        "finish() runs the blocks posted before it, returns after the loop's teardown, then refuses blocks",
        arguments: backends)
    func finishRunsEarlierBlocks(_ backend: BackendKind) async throws {
        let worker = try LoopThread(backend: backend)
        let trace = Trace()
        // Its cancel callback runs when the loop is torn down, as the thread exits.
        let source = Loop.Source(schedule: nil, cancel: { _, _ in trace("torn down") }) {}
        worker.loop.add(source, to: .default)
        let gate = Latch()
        #expect(worker.perform { trace(gate.wait() ? "block 1" : "block 1: the gate never opened") })
        for index in 2...5 { #expect(worker.perform { trace("block \(index)") }) }
        let finishing = Task {
            await worker.finish()
            return trace.all
        }
        gate.open()
        let atReturn = await value(of: finishing)
        #expect(atReturn == ["block 1", "block 2", "block 3", "block 4", "block 5", "torn down"])
        #expect(worker.perform { trace("late block") } == false)
        #expect(worker.loop.currentMode == nil)
        #expect(trace.all == atReturn)
    }

    @Test("finish() again, concurrently, or after stop() waits for the same end", arguments: backends)
    func finishTwiceAndAfterStop(_ backend: BackendKind) async throws {
        let worker = try LoopThread(backend: backend)
        let gate = Latch()
        let ran = AtomicInt()
        worker.perform {
            gate.wait()
            ran.increment()
        }
        let finishes = (0..<4).map { _ in
            Task {
                await worker.finish()
                return ran.value
            }
        }
        gate.open()
        for finishing in finishes { #expect(await value(of: finishing) == 1) }
        // Once ended: at once.
        #expect(await value(of: Task { await worker.finish() }) != nil)

        let stopped = try LoopThread(backend: backend)
        stopped.stop()
        #expect(await value(of: Task { await stopped.finish() }) != nil)
    }

    /// More tasks call finish() than the cooperative pool has threads, while every loop is busy
    /// with a block that waits until all of them have called it; what opens that block's gate is
    /// this test's own task, on the same pool. Were finish() to block its thread until the loop
    /// ended, the pool would be full of blocked finishes, the last callers (and this task) would
    /// never run, and the gate would open only after its deadline: the blocks report it.
    @Test("finish() never blocks a cooperative thread while the loop finishes earlier blocks", arguments: backends)
    func finishHoldsNoThread(_ backend: BackendKind) async throws {
        let count = max(8, ProcessInfo.processInfo.activeProcessorCount * 4)
        let workers = try (0..<count).map { _ in try LoopThread(backend: backend) }
        let gate = Latch()
        let gateOpenedInTime = AtomicInt()
        for worker in workers {
            #expect(worker.perform { if gate.wait(for: generousDeadline * 2) { gateOpenedInTime.increment() } })
        }
        let (calling, announce) = AsyncStream<Void>.makeStream()
        let finishes = workers.map { worker in
            Task {
                announce.yield()
                await worker.finish()
            }
        }
        var called = 0
        for await _ in calling {
            called += 1
            if called == count { break }
        }
        gate.open()
        for finishing in finishes { #expect(await value(of: finishing, within: generousDeadline * 3) != nil) }
        #expect(gateOpenedInTime.value == count, "\(count - gateOpenedInTime.value) blocks waited out their gate")
    }

    @Test("finish() awaited on the loop's own thread traps with a message", arguments: backends)
    func finishOnOwnThreadTraps(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let worker = try LoopThread(backend: backend)
            await Task(executorPreference: worker.loop) { await worker.finish() }.value
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.contains("LoopThread.finish() awaited on its own thread; it would wait for itself"), "\(errors)")
    }
}
