import Logging
import RunLoopKit
import RunLoopKitServiceLifecycle
import ServiceLifecycle
import TestSupport
import Testing

/// `LoopThreadService` under a real `ServiceGroup`: it serves while the group runs, ends its loop
/// after the blocks posted before the graceful shutdown (or cancellation), refuses later blocks,
/// and its `run()` returns.
@Suite("LoopThreadService under a ServiceGroup")
struct LoopThreadServiceTests {
    @Test(
        "the loop serves blocks and timers while the group runs; graceful shutdown ends it", arguments: serviceBackends)
    func servesWhileGroupRuns(_ backend: BackendKind) async throws {
        let service = try LoopThreadService(name: "served", backend: backend)
        let (group, running) = startGroup(running: service)
        let trace = Trace()
        let served = Latch()
        let timer = try Loop.Timer(after: .milliseconds(1)) { _ in
            trace("timer")
            served.open()
        }
        // The block adds the timer: the block first, then the timer.
        #expect(
            service.thread.perform {
                trace("block on the loop: \(Loop.currentIfCreated === service.loop)")
                service.loop.add(timer, to: .default)
            })
        #expect(await eventually { served.isOpen }, "the timer never fired")
        #expect(trace.all == ["block on the loop: true", "timer"])

        await group.triggerGracefulShutdown()
        let outcome = await value(of: Task { await howItEnded(running) })
        #expect(outcome == "returned", "the group's run: \(outcome ?? "never returned")")
        #expect(service.thread.perform { trace("late") } == false)
        #expect(service.loop.currentMode == nil)
        #expect(trace.all == ["block on the loop: true", "timer"])
    }

    /// The first block holds the loop until the shutdown has begun (a probe block is refused):
    /// the blocks queued behind it were posted before the shutdown and must all run, in order,
    /// before the loop ends and the group's run returns.
    @Test(
        "graceful shutdown ends the loop after every block posted before it; run() returns", arguments: serviceBackends)
    func shutdownAfterEarlierBlocks(_ backend: BackendKind) async throws {
        let service = try LoopThreadService(name: "shutdown", backend: backend)
        let (group, running) = startGroup(running: service)
        let trace = Trace()
        let gate = Latch()
        #expect(service.thread.perform { trace(gate.wait() ? "block 1" : "block 1: the gate never opened") })
        for index in 2...20 { #expect(service.thread.perform { trace("block \(index)") }) }

        await group.triggerGracefulShutdown()
        let began = await eventually { !service.thread.perform {} }
        #expect(began, "blocks were still accepted long after the graceful shutdown")
        gate.open()
        let outcome = await value(of: Task { await howItEnded(running) })
        let atReturn = trace.all
        #expect(outcome == "returned", "the group's run: \(outcome ?? "never returned")")
        #expect(atReturn == (1...20).map { "block \($0)" })
        #expect(service.thread.perform { trace("late") } == false)
        #expect(trace.all == atReturn)
    }

    @Test("cancelling the task that runs the service ends the loop after earlier blocks", arguments: serviceBackends)
    func cancellationEndsLoop(_ backend: BackendKind) async throws {
        let service = try LoopThreadService(name: "cancelled", backend: backend)
        let trace = Trace()
        let gate = Latch()
        #expect(service.thread.perform { trace(gate.wait() ? "block 1" : "block 1: the gate never opened") })
        #expect(service.thread.perform { trace("block 2") })
        let running = Task { await service.run() }
        running.cancel()
        let began = await eventually { !service.thread.perform {} }
        #expect(began, "blocks were still accepted long after the cancellation")
        gate.open()
        #expect(await value(of: running) != nil)
        #expect(trace.all == ["block 1", "block 2"])
    }

    @Test("run() returns when the thread is stopped another way", arguments: serviceBackends)
    func runEndsWithThread(_ backend: BackendKind) async throws {
        let service = try LoopThreadService(name: "stopped", backend: backend)
        let running = Task { await service.run() }
        _ = try TestThread { service.thread.stop() }
        #expect(await value(of: running) != nil)
        // And at once when called on an ended thread.
        #expect(await value(of: Task { await service.run() }) != nil)
    }
}

/// "returned", or what the task threw.
private func howItEnded(_ task: Task<Void, any Error>) async -> String {
    do {
        try await task.value
        return "returned"
    } catch {
        return "threw \(error)"
    }
}
