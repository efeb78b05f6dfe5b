import RunLoopKit
import TestSupport
import Testing

/// Objects › Blocks: FIFO, and a mode with a queued block is not empty — also for a run
/// nested inside a block.
extension BlockTests {
    @Test("a run nested in a block sees the blocks the outer drain has not reached", arguments: backends)
    func nestedRunSeesQueuedBlocks(_ backend: BackendKind) async throws {
        let trace = Trace()
        try await onLoopThread(backend) { loop in
            loop.perform(in: ["B"]) { trace("block for B") }
            loop.perform { trace("nested: \(loop.run("B", timeout: generousDeadline))") }
            loop.run(timeout: .zero)
        }
        #expect(trace.all == ["block for B", "nested: finished"])
    }

    @Test("a run nested in a block runs older blocks before newer ones", arguments: backends)
    func nestedRunKeepsFIFO(_ backend: BackendKind) async throws {
        let trace = Trace()
        try await onLoopThread(backend) { loop in
            loop.perform {
                trace("1")
                loop.perform { trace("3") }
                loop.run(timeout: .zero)
            }
            loop.perform { trace("2") }
            loop.run(timeout: .zero)
        }
        #expect(trace.all == ["1", "2", "3"])
    }
}
