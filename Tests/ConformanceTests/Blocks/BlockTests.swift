import Dispatch
import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › Blocks, B1–B5.
@Suite("Blocks")
struct BlockTests {
    @Test("blocks run in FIFO order", arguments: backends)
    func fifo(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            for index in 0..<20 { loop.perform { trace("\(index)") } }
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == (0..<20).map { "\($0)" })
    }

    @Test("blocks run only while one of their modes runs, and keep their queue order", arguments: backends)
    func onlyInTheirModes(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.perform(in: ["A"]) { trace("A1") }
            loop.perform(in: ["B"]) { trace("B1") }
            loop.perform(in: ["A", "B"]) { trace("AB") }
            loop.perform(in: ["A"]) { trace("A2") }
            trace("run B: \(loop.run("B", timeout: generousDeadline))")
            trace("run A: \(loop.run("A", timeout: generousDeadline))")
        }
        #expect(trace.all == ["B1", "AB", "run B: finished", "A1", "A2", "run A: finished"])
    }

    @Test("a block queued during a drain runs at a later drain", arguments: backends)
    func queuedDuringDrainWaits(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.record([.beforeTimers], into: trace)
            loop.add(try Loop.Timer(after: .zero) { _ in trace("timer") }, to: .default)
            loop.perform {
                trace("first")
                loop.perform { trace("queued by first") }
            }
            loop.perform { trace("second") }
            loop.run(timeout: generousDeadline)
        }
        // Drains: step 1 runs first and second; queued-by-first waits for the drain at the end
        // of the pass (step 6), after the timer.
        #expect(trace.all == ["beforeTimers", "first", "second", "timer", "queued by first"])
    }

    /// The drain takes the whole queue at once when every block in it runs in the mode (the
    /// same modes throughout), and in runs otherwise: in both, a block another thread queues
    /// at the request of a block being drained waits for a later drain.
    @Test(
        "a block another thread queues while a drain is under way runs at a later drain",
        arguments: backends, [false, true])
    func queuedFromAnotherThreadDuringDrainWaits(_ backend: BackendKind, mixedModes: Bool) async throws {
        let trace = Trace()
        let posted = DispatchSemaphore(value: 0)
        let answered = Ref<Bool>()
        try await onLoopThread(backend) { loop in
            loop.record([.beforeTimers], into: trace)
            loop.add(try Loop.Timer(after: .zero) { _ in trace("timer") }, to: .default)
            loop.perform {
                trace("first")
                DispatchQueue.global().async {
                    loop.perform { trace("from another thread") }
                    posted.signal()
                }
                answered.value = posted.wait(timeout: .now() + 60) == .success
            }
            if mixedModes {
                loop.perform(in: [.default]) { trace("second") }
            } else {
                loop.perform { trace("second") }
            }
            loop.run(timeout: generousDeadline)
        }
        #expect(answered.value == true, "the other thread never queued its block")
        #expect(trace.all == ["beforeTimers", "first", "second", "timer", "from another thread"])
    }

    @Test("perform without modes runs in every common mode", arguments: backends)
    func defaultIsCommon(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.addCommonMode("tracking")
            loop.perform { trace("in \(loop.currentMode!)") }
            loop.perform(in: [.common]) { trace("explicit common in \(loop.currentMode!)") }
            loop.run("not-common", timeout: .zero)
            loop.run("tracking", timeout: generousDeadline)
        }
        #expect(trace.all == ["in tracking", "explicit common in tracking"])
    }

    @Test("a queued block keeps its mode alive; the run finishes once it ran", arguments: backends)
    func blockKeepsModeAlive(_ backend: BackendKind) async throws {
        let (result, trace) = try await traced(backend) { loop, trace in
            loop.perform(in: ["only-blocks"]) { trace("ran") }
            return loop.run("only-blocks", timeout: generousDeadline)
        }
        #expect(result == .finished)
        #expect(trace.all == ["ran"])
    }

    @Test(
        "a block posted from another thread wakes the sleeping loop", .realTimeOnly(.otherThreadWhileAsleep),
        arguments: backends)
    func performWakes(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            let (keepAlive, _) = try keepAliveSource()
            loop.add(keepAlive, to: .default)
            _ = try whenAsleep(loop) {
                loop.perform {
                    trace("performed")
                    loop.stop()
                }
            }
        }
        #expect(result == .stopped)
        #expect(trace.all == ["performed"])
    }

    @Test("a block for another mode does not wake or end the run", arguments: backends)
    func otherModeBlockIgnored(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            loop.record([.afterWaiting], into: trace)
            loop.add(try Loop.Timer(after: .milliseconds(30)) { _ in trace("timer") }, to: .default)
            loop.perform(in: ["elsewhere"]) { trace("elsewhere") }
        }
        #expect(result == .finished)
        #expect(trace.all == ["afterWaiting", "timer"])
    }
}
