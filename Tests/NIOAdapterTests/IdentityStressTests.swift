import NIOCore
import RunLoopKit
import RunLoopKitNIO
import Synchronization
import TestSupport
import Testing

/// The loop's attachment slot under races (`RUNLOOPKIT_STRESS_SCALE` scales the rounds): the
/// first `loop.eventLoop` asked for by several threads at once, and adapters made while the loop
/// ends.
@Suite("RunLoopKitNIO: identity under races")
struct IdentityStressTests {
    @Test("threads asking a fresh loop for its event loop at once all get the same object", arguments: adapterBackends)
    func firstAdapterRace(_ backend: BackendKind) async throws {
        try await offThePool {
            let rounds = scaled(200, minimum: 5)
            let askers = 4
            var mismatches = 0
            for _ in 0..<rounds {
                let worker = try LoopThread(backend: backend)
                let go = Latch()
                let adapters = Lock<[LoopEventLoop]>([])
                let threads = try (0..<askers).map { _ in
                    try TestThread {
                        go.wait()
                        let adapter = worker.loop.eventLoop
                        // Kept alive until compared: identity is promised while a reference lives.
                        adapters.withLock { $0.append(adapter) }
                    }
                }
                go.open()
                for thread in threads { #expect(thread.join()) }
                let all = adapters.withLock { $0 }
                if all.count != askers || all.contains(where: { $0 !== all[0] }) || all[0] !== worker.loop.eventLoop {
                    mismatches += 1
                }
                worker.stop()
            }
            #expect(mismatches == 0)
        }
    }

    @Test(
        "adapters made and tasks scheduled while the loop ends: every task's future fails with shutdown",
        arguments: adapterBackends)
    func adapterRacingTheEnd(_ backend: BackendKind) async throws {
        try await offThePool {
            let rounds = scaled(200, minimum: 5)
            let schedulers = 3
            var problems: [String] = []
            for round in 0..<rounds {
                let worker = try LoopThread(backend: backend)
                let loop = worker.loop
                let go = Latch()
                let futures = Lock<[EventLoopFuture<Void>]>([])
                let threads = try (0..<schedulers).map { _ in
                    try TestThread {
                        go.wait()
                        for _ in 0..<20 {
                            // The first call of the round makes the adapter (its futures keep it):
                            // before the loop's end, during its teardown, or after it.
                            let future = loop.eventLoop.scheduleTask(in: .hours(1)) {}.futureResult
                            futures.withLock { $0.append(future) }
                        }
                    }
                }
                go.open()
                worker.stop()
                for thread in threads { #expect(thread.join()) }
                let all = futures.withLock { $0 }
                let failedWithShutdown = AtomicInt()
                let otherOutcomes = AtomicInt()
                let completed = AtomicInt()
                let allCompleted = Latch()
                for future in all {
                    future.whenComplete { result in
                        if failed(result, with: .shutdown) {
                            failedWithShutdown.increment()
                        } else {
                            otherOutcomes.increment()
                        }
                        if completed.increment() == all.count { allCompleted.open() }
                    }
                }
                guard allCompleted.wait(for: generousDeadline) else {
                    problems.append("round \(round): \(completed.value) of \(all.count) futures completed")
                    break
                }
                if failedWithShutdown.value != schedulers * 20 || otherOutcomes.value != 0 {
                    problems.append(
                        "round \(round): \(failedWithShutdown.value) shutdown, \(otherOutcomes.value) other")
                }
            }
            #expect(problems == [])
        }
    }
}
