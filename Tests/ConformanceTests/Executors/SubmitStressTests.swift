import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// `submit` racing the events that decide whether its block runs (behaviour contract,
/// Sources/Core/RunLoopKit.docc/BehaviourContract.md › L4: Everything else from any thread).
///
/// Windows: a submit queued as the loop's thread ends (teardown drops it: its caller must hear
/// `loopEnded`); a cancellation while a drain takes the block (removed from the queue, or
/// skipped in the drain's batch: never run, yet the caller answered); `LoopThread.stop()`
/// sealing the queue while submits arrive (refused, never stranded). Each round checks that
/// every caller was answered, and that a value was returned exactly for each body that ran.
@Suite("Submit: races")
struct SubmitStressTests {
    @Test("submits racing the loop's teardown are all answered: a value exactly when the body ran", arguments: backends)
    func racingTeardown(_ backend: BackendKind) async throws {
        let rounds = scaled(600, minimum: 15)
        for round in 0..<rounds {
            let ran = AtomicInt()
            let (loop, thread) = try startLoopThread(backend, jitter: round % 5)
            let stopAfter = round % 7 + 1
            let answers = try await withinDeadline("round \(round)") {
                try await submitUntilRefused(posters: 6) {
                    try await loop.submit {
                        if ran.increment() == stopAfter { loop.stop() }
                    }
                }
            }
            #expect(await thread.finished.waitOffPool())
            _ = thread.join()
            let errors = answers.flatMap(\.errors)
            #expect(answers.map(\.values).reduce(0, +) == ran.value, "round \(round)")
            #expect(errors.allSatisfy { $0 == .loopEnded || $0 == .refused }, "round \(round): \(errors)")
            // Every poster went on until its loop was gone: the race was played.
            #expect(answers.allSatisfy { $0.errors.last == .refused || $0.errors.last == .loopEnded })
        }
    }

    @Test("cancellations racing the drain: each caller gets a value exactly when the body ran", arguments: backends)
    func cancelRacingDrain(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let loop = worker.loop
            let ran = AtomicInt()
            let (batches, batchSize) = (scaled(600, minimum: 15), 16)
            var (values, cancelled) = (0, 0)
            for batch in 0..<batches {
                var tasks: [Task<Int, any Error>] = []
                for index in 0..<batchSize {
                    tasks.append(
                        Task {
                            // Some submits begin before the cancellation, some after.
                            for _ in 0..<(index % 3) { await Task.yield() }
                            return try await loop.submit {
                                ran.increment()
                                return 1
                            }
                        })
                }
                // Cancelled while the submits are being queued, taken and run: a few yields
                // more each batch, so that some land before, some during and some after the drain.
                for _ in 0..<(batch % 12) { await Task.yield() }
                for task in tasks { task.cancel() }
                for task in tasks {
                    switch try await resultWithinDeadline("batch \(batch)", of: task) {
                    case let .success(value): values += value
                    case .failure(SubmitError.cancelled): cancelled += 1
                    case let .failure(error): Issue.record("batch \(batch): \(error)")
                    }
                }
            }
            // FIFO: once this ran, every earlier block ran, or left the queue, or was skipped.
            try await loop.submit {}
            #expect(values == ran.value)
            #expect(values + cancelled == batches * batchSize)
            #expect(loop.queuedBlockCount == 0)
        }
    }

    @Test("submits racing LoopThread.stop() are all answered: a value exactly when the body ran", arguments: backends)
    func racingStop(_ backend: BackendKind) async throws {
        let rounds = scaled(600, minimum: 15)
        for round in 0..<rounds {
            let worker = try LoopThread(backend: backend)
            let ran = AtomicInt()
            let posting = Atomic<Int>(0)
            let stopped = Latch()
            let posters = 3
            // The stopper waits until every poster has submitted once, on its own thread:
            // stop() joins the loop's thread.
            let allPosting = Latch()
            _ = try TestThread {
                allPosting.wait()
                worker.stop()
                stopped.open()
            }
            let answers = try await withinDeadline("round \(round)") {
                try await submitUntilRefused(posters: posters) {
                    _ = try await worker.submit { ran.increment() }
                } afterFirst: {
                    if posting.add(1, ordering: .relaxed).newValue == posters { allPosting.open() }
                }
            }
            #expect(await stopped.waitOffPool())
            let errors = answers.flatMap(\.errors)
            #expect(answers.map(\.values).reduce(0, +) == ran.value, "round \(round)")
            // Blocks accepted before the finishing block run before it: none is dropped.
            #expect(errors.allSatisfy { $0 == .refused }, "round \(round): \(errors)")
            #expect(answers.allSatisfy { $0.errors.last == .refused })
        }
    }
}

/// What one poster of ``submitUntilRefused(posters:_:afterFirst:)`` was told.
private struct Answers: Sendable {
    var values = 0
    var errors: [SubmitError] = []
}

/// `posters` tasks each call `submit` until it throws; returns what each was told.
private func submitUntilRefused(
    posters: Int, _ submit: @escaping @Sendable () async throws -> Void,
    afterFirst: @escaping @Sendable () -> Void = {}
) async throws -> [Answers] {
    try await withThrowingTaskGroup(of: Answers.self) { group in
        for _ in 0..<posters {
            group.addTask {
                var answers = Answers()
                var first = true
                while answers.errors.isEmpty {
                    do {
                        try await submit()
                        answers.values += 1
                    } catch let error as SubmitError {
                        answers.errors.append(error)
                    }
                    if first {
                        first = false
                        afterFirst()
                    }
                }
                return answers
            }
        }
        return try await group.reduce(into: []) { $0.append($1) }
    }
}

/// A loop on a thread of its own that runs `.default` until stopped, then lets its thread end
/// (tearing the loop down).
private func startLoopThread(_ backend: BackendKind, jitter: Int) throws -> (Loop, TestThread) {
    let made = Lock<Result<Loop, any Error>?>(nil)
    let ready = Latch()
    let thread = try TestThread {
        do {
            let loop = try Loop.current(backend: backend)
            let keepAlive = Loop.Source {}
            loop.add(keepAlive, to: .default)
            made.withLock { $0 = .success(loop) }
            ready.open()
            loop.run(.default, timeout: generousDeadline)
            keepAlive.invalidate()
            // Jitter before the thread ends: more submits land between the run's end and the
            // teardown (queued, then dropped) in some rounds, after it (refused) in others.
            usleep(UInt32(jitter) * 100)
        } catch {
            made.withLock { $0 = .failure(error) }
            ready.open()
        }
    }
    guard ready.wait(), let result = made.withLock({ $0 }) else { throw TestTimeout() }
    return (try result.get(), thread)
}
