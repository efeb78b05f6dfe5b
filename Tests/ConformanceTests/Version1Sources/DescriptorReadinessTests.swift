import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// A descriptor's readiness as an async sequence a loop serves (behaviour contract › D1–D3:
/// level-triggered readiness): coalesced, never a backlog; watched only while a consumer
/// waits, so the loop sleeps while nobody asks; cancellation takes the source out; a loop
/// that ends while the consumer waits ends the wait with `LoopSequenceError.loopEnded`.
@Suite("Descriptor readiness as an async sequence")
struct DescriptorReadinessTests {
    @Test(
        "several writes make one element; while nobody asks the descriptor is not watched and the loop sleeps",
        arguments: backends)
    func coalescesAndSleeps(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let pipe = try Pipe()
            defer { pipe.close() }
            let trace = Trace()
            let firstHanded = AsyncGate()
            let askAgain = AsyncGate()
            let waitingAgain = AsyncGate()
            let waits = Atomic<Int>(0)
            var readiness = try worker.loop.readiness(of: pipe.readEnd, for: .readable)
            readiness.onWaiting = { if waits.add(1, ordering: .relaxed).newValue == 2 { waitingAgain.open() } }

            for _ in 1...3 { pipe.fill() }
            let consumer = Task {
                var iterator = readiness.makeAsyncIterator()
                trace(try await iterator.next()?.description ?? "nil")
                firstHanded.open()
                try await askAgain.wait()
                return try await iterator.next()
            }
            try await firstHanded.wait()
            // Readable, not drained, and nobody asks: the loop must not be told about the pipe.
            let before = try await statisticsOnLoopThread(worker.loop)
            for _ in 1...5 { pipe.fill() }
            // A block makes the loop run a pass: one that watched the pipe would see it ready.
            #expect(worker.perform(waitUntilDone: true) {})
            let after = try await statisticsOnLoopThread(worker.loop)
            #expect(worker.loop.registeredDescriptorCount == 0)
            #expect(after.descriptorEvents == before.descriptorEvents)
            #expect(after.callouts.descriptorSource == before.callouts.descriptorSource)
            #expect(
                after.passes - before.passes <= 2, "the loop ran \(after.passes - before.passes) passes for one block")
            trace("drained \(pipe.drain())")
            // Drained: the next element is the next write's, not a backlog of the eight.
            askAgain.open()
            try await waitingAgain.wait()
            trace("consumer waits")
            pipe.fill()
            trace(try await within { try await consumer.value }?.description ?? "nil")
            #expect(trace.all == ["[readable]", "drained 8", "consumer waits", "[readable]"])
        }
    }

    @Test("a writable interest reports writable; a closed peer reports a hang-up", arguments: backends)
    func writableAndHangup(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let pipe = try Pipe()
            defer { Glibc.close(pipe.readEnd) }
            let reports = try await within {
                var writable = try worker.loop.readiness(of: pipe.writeEnd, for: .writable).makeAsyncIterator()
                let first = try await writable.next()
                Glibc.close(pipe.writeEnd)
                var readable = try worker.loop.readiness(of: pipe.readEnd).makeAsyncIterator()
                let second = try await readable.next()
                return [first?.contains(.writable), second?.contains(.hangup)]
            }
            #expect(reports == [true, true])
        }
    }

    @Test("bad descriptors and empty interests are refused with an ArgumentError", arguments: backends)
    func badInputRefused(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let pipe = try Pipe()
            defer { pipe.close() }
            #expect(throws: ArgumentError.self) { _ = try worker.loop.readiness(of: -1) }
            #expect(throws: ArgumentError.self) { _ = try worker.loop.readiness(of: pipe.readEnd, for: []) }
        }
    }

    @Test(
        "cancelling the consuming task ends its wait with nil and takes the descriptor out of the loop",
        arguments: backends)
    func consumerCancelled(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let pipe = try Pipe()
            defer { pipe.close() }
            let waiting = AsyncGate()
            var readiness = try worker.loop.readiness(of: pipe.readEnd)
            readiness.onWaiting = { waiting.open() }
            let consumer = Task {
                var elements = 0
                for try await _ in readiness { elements += 1 }
                return elements
            }
            try await waiting.wait()
            #expect(
                await loopWatchesWaitingConsumer(worker.loop),
                "the loop never watched the waiting consumer's descriptor")
            consumer.cancel()
            #expect(try await within { try await consumer.value } == 0)
            #expect(worker.loop.registeredDescriptorCount == 0)
        }
    }

    @Test("the loop's thread ending while the consumer waits throws loopEnded", arguments: backends)
    func loopEndsWhileWaiting(_ backend: BackendKind) async throws {
        let worker = try LoopThread(backend: backend)
        let pipe = try Pipe()
        defer { pipe.close() }
        let waiting = AsyncGate()
        var readiness = try worker.loop.readiness(of: pipe.readEnd)
        readiness.onWaiting = { waiting.open() }
        let consumer = Task {
            var iterator = readiness.makeAsyncIterator()
            let first = try await iterator.next()
            return first
        }
        try await waiting.wait()
        worker.stop()
        let outcome = try await within { await consumer.result }
        #expect(throws: LoopSequenceError.loopEnded) { try outcome.get() }
        // A new wait on the ended loop fails at once.
        await #expect(throws: LoopSequenceError.loopEnded) {
            var iterator = try worker.loop.readiness(of: pipe.readEnd).makeAsyncIterator()
            _ = try await iterator.next()
        }
    }
}
