import Glibc
import RunLoopKit
import TestSupport
import Testing

/// Objects › Blocks: FIFO, and a mode with a queued block is not empty — also for a run
/// nested inside a block.
extension BlockTests {
    @Test("a run nested in a block sees the blocks the outer drain has not reached", arguments: backends)
    func nestedRunSeesQueuedBlocks(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.perform(in: ["B"]) { trace("block for B") }
            loop.perform { trace("nested: \(loop.run("B", timeout: generousDeadline))") }
            loop.run(timeout: .zero)
        }
        #expect(trace.all == ["block for B", "nested: finished"])
    }

    @Test("a run nested in a block runs older blocks before newer ones", arguments: backends)
    func nestedRunKeepsFIFO(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
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

/// Objects › Blocks and Modes › common modes: a mode made common while a run nested in a block
/// sleeps in it wakes that run for the blocks the outer drain took and has not run.
extension BlockTests {
    /// The outer drain takes B1 and B2 together; B1 runs a nested run in "x", which is not
    /// common, so B2 (for the common modes) waits in the drain's batch. Another thread makes
    /// "x" common once the nested run sleeps: B2 now runs in "x", so the run must wake for it.
    /// Before the fix the wake was decided from the shared queue alone, which does not hold
    /// B2: the nested run slept until its timeout and ended `timedOut`.
    @Test(
        "a mode made common wakes a run nested in a block for the blocks the outer drain took",
        .realTimeOnly(.otherThreadWhileAsleep), arguments: backends)
    func commonModeWakesNestedRunForTakenBlocks(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            // Keeps "x" from being empty; never fires during the test.
            let keepAlive = try Loop.Timer(after: .seconds(3600)) { _ in }
            loop.add(keepAlive, to: "x")
            loop.add(
                Loop.Observer(activities: .beforeWaiting, repeats: false) { _, _ in
                    do {
                        _ = try whenAsleep(loop) {
                            loop.addCommonMode("x")
                        }
                    } catch {
                        trace("could not start the poster: \(error)")
                    }
                }, to: "x")
            loop.perform {
                trace("B1")
                trace("nested: \(loop.run("x", timeout: generousDeadline))")
            }
            loop.perform {
                trace("B2 in \(loop.currentMode!)")
                loop.stop()
            }
            trace("outer: \(loop.run(timeout: .zero))")
            keepAlive.invalidate()
        }
        #expect(trace.all == ["B1", "B2 in x", "nested: stopped", "outer: timedOut"])
    }
}
