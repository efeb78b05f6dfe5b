import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Cancelling the task awaiting a `submit`: before the block starts it never runs and leaves
/// the queue; after, the caller gets the value.
@Suite("Submit cancellation")
struct SubmitCancellationTests {
    @Test("cancelled while queued: cancelled at once, the block leaves the queue and never runs", arguments: backends)
    func cancelWhileQueued(_ backend: BackendKind) async throws {
        let parked = try ParkedLoop(backend, waitingFor: 1)
        let loop = parked.loop
        let ran = AtomicInt()
        let task = Task { try await loop.submit { ran.increment() } }
        #expect(await parked.waitUntilQueued())
        #expect(loop.queuedBlockCount == 1)
        task.cancel()
        // Answered while the loop is still parked: the cancellation waits for nothing.
        let result = try await resultWithinDeadline("the cancelled submit", of: task)
        #expect((result.error as? SubmitError) == .cancelled)
        #expect(loop.queuedBlockCount == 0)
        // A block posted later runs: the cancelled one, older, would have run before it.
        let later = Latch()
        loop.perform { later.open() }
        parked.unpark(.drain)
        #expect(await later.waitOffPool())
        #expect(await parked.join())
        #expect(ran.value == 0)
    }

    @Test(
        "cancelled after a drain took it but before it started: cancelled at once, and skipped",
        arguments: backends)
    func cancelAfterTaken(_ backend: BackendKind) async throws {
        let parked = try ParkedLoop(backend, waitingFor: 2)
        let loop = parked.loop
        let (blockerStarted, release) = (Latch(), Latch())
        // Queued first: the drain takes it and the submitted block behind it in one batch, and
        // the submitted block waits in the batch while this one holds the loop.
        loop.perform {
            blockerStarted.open()
            release.wait()
        }
        let ran = AtomicInt()
        let task = Task { try await loop.submit { ran.increment() } }
        #expect(await parked.waitUntilQueued())
        parked.unpark(.drain)
        #expect(await blockerStarted.waitOffPool())
        #expect(loop.queuedBlockCount == 0) // both taken by the drain
        task.cancel()
        let result = try await resultWithinDeadline("the cancelled submit", of: task)
        release.open()
        #expect((result.error as? SubmitError) == .cancelled)
        #expect(await parked.join())
        #expect(ran.value == 0)
    }

    @Test("cancelled after the block started: the block finishes and the caller gets its value", arguments: backends)
    func cancelAfterStart(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let (started, proceed) = (Latch(), Latch())
            let task = Task {
                try await worker.submit {
                    started.open()
                    proceed.wait()
                    return "finished"
                }
            }
            #expect(await started.waitOffPool())
            task.cancel()
            proceed.open()
            let value = try await resultWithinDeadline("the started submit", of: task).get()
            #expect(value == "finished")
        }
    }

    @Test("a task cancelled before it submits never queues the block", arguments: backends)
    func cancelledBeforeSubmit(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let ran = AtomicInt()
            let gate = Latch()
            let task = Task {
                _ = await gate.waitOffPool()
                return try await worker.submit { ran.increment() }
            }
            task.cancel()
            gate.open()
            let result = try await resultWithinDeadline("the cancelled submit", of: task)
            #expect((result.error as? SubmitError) == .cancelled)
            // FIFO: had the block been queued, it would have run before this one.
            try await worker.submit {}
            #expect(ran.value == 0)
        }
    }
}

extension Result {
    /// The failure, if any.
    var error: Failure? {
        if case let .failure(error) = self { error } else { nil }
    }
}
