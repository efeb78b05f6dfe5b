import NIOCore
import RunLoopKit
import RunLoopKitNIO
import Synchronization
import TestSupport
import Testing

/// The adapter's cross-thread windows, many rounds (`RUNLOOPKIT_STRESS_SCALE` scales them):
/// work given from several threads while the loop ends, and cancels racing the timers' firing.
@Suite("RunLoopKitNIO: stress")
struct StressTests {
    @Test(
        "execute, submit and scheduleTask from four threads racing the loop's end: each task runs exactly once, one at a time, every future completes",
        arguments: adapterBackends)
    func workRacingTheEnd(_ backend: BackendKind) async throws {
        try await offThePool {
            let rounds = scaled(100, minimum: 5)
            let perThread = 200
            let posters = 4
            var problems: [String] = []
            for round in 0..<rounds {
                let worker = try LoopThread(backend: backend)
                let eventLoop = worker.loop.eventLoop
                let executed = AtomicInt()
                let completed = AtomicInt()
                let outsideEventLoop = AtomicInt()
                let overlapping = AtomicInt()
                let unexpectedFailures = AtomicInt()
                let busy = Atomic<Bool>(false)
                let allCompleted = Latch()
                let futuresPerPoster = perThread * 2
                let expectedFutures = posters * futuresPerPoster
                let halfway = AtomicInt()
                let stopNow = Latch()
                let task: @Sendable () -> Void = {
                    if busy.exchange(true, ordering: .acquiringAndReleasing) { overlapping.increment() }
                    if !eventLoop.inEventLoop { outsideEventLoop.increment() }
                    executed.increment()
                    busy.store(false, ordering: .releasing)
                }
                let onComplete: @Sendable (Result<Int, any Error>) -> Void = { result in
                    if case let .failure(error) = result, error as? EventLoopError != .shutdown {
                        unexpectedFailures.increment()
                    }
                    if completed.increment() == expectedFutures { allCompleted.open() }
                }
                let threads = try (0..<posters).map { _ in
                    try TestThread {
                        for index in 0..<perThread {
                            eventLoop.execute(task)
                            eventLoop.submit { index }.whenComplete(onComplete)
                            eventLoop.scheduleTask(in: .microseconds(Int64(index % 50))) { index }.futureResult
                                .whenComplete(onComplete)
                            if index == perThread / 2, halfway.increment() == posters { stopNow.open() }
                        }
                    }
                }
                #expect(stopNow.wait(for: generousDeadline))
                worker.stop()
                for thread in threads { #expect(thread.join()) }
                guard allCompleted.wait(for: generousDeadline) else {
                    problems.append("round \(round): \(completed.value) of \(expectedFutures) futures completed")
                    break
                }
                let counts = (executed.value, outsideEventLoop.value, overlapping.value, unexpectedFailures.value)
                if counts != (posters * perThread, 0, 0, 0) {
                    problems.append(
                        "round \(round): executed, outside the event loop, overlapping, unexpected failures: \(counts)")
                }
            }
            #expect(problems == [])
        }
    }

    @Test(
        "cancel racing the timer's firing: each task either runs and succeeds or is cancelled and never runs",
        arguments: adapterBackends)
    func cancelRacingFiring(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            let tasks = scaled(20_000, minimum: 200)
            let mismatches = AtomicInt()
            let cancelledCount = AtomicInt()
            let ranCount = AtomicInt()
            let completed = AtomicInt()
            let allCompleted = Latch()
            for index in 0..<tasks {
                let ran = Atomic<Bool>(false)
                let scheduled = eventLoop.scheduleTask(in: .microseconds(Int64(index % 20))) {
                    ran.store(true, ordering: .releasing)
                    return index
                }
                scheduled.futureResult.whenComplete { result in
                    let didRun = ran.load(ordering: .acquiring)
                    switch result {
                    case .success(index) where didRun: ranCount.increment()
                    case let .failure(error as EventLoopError) where error == .cancelled && !didRun:
                        cancelledCount.increment()
                    default: mismatches.increment()
                    }
                    if completed.increment() == tasks { allCompleted.open() }
                }
                scheduled.cancel()
            }
            #expect(allCompleted.wait(for: generousDeadline), "\(completed.value) of \(tasks) futures completed")
            #expect(mismatches.value == 0)
            #expect(ranCount.value + cancelledCount.value == tasks)
            // Both outcomes happened (the race was exercised), unless the scale is tiny.
            if tasks >= 2_000 { #expect(cancelledCount.value > 0) }
        }
    }
}
