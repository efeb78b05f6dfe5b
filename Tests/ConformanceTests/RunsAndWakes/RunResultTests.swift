import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › R9: The decision;
/// W1: Stopping a run; N1: Runs nest.
@Suite("Run results, stop and nesting")
struct RunResultTests {
    @Test("a run times out when its timeout passes with work left", arguments: backends)
    func timesOut(_ backend: BackendKind) async throws {
        let result = try await onLoopThread(backend) { loop in
            let (source, _) = try keepAliveSource()
            loop.add(source, to: .default)
            return loop.run(timeout: .milliseconds(5))
        }
        #expect(result == .timedOut)
    }

    @Test("handledSource takes precedence over timedOut on a poll", arguments: backends)
    func handledBeatsTimedOut(_ backend: BackendKind) async throws {
        let result = try await onLoopThread(backend) { loop in
            let source = Loop.Source {}
            loop.add(source, to: .default)
            source.signal()
            return loop.run(timeout: .zero, returnAfterSourceHandled: true)
        }
        #expect(result == .handledSource)
    }

    @Test("timedOut takes precedence over stopped: a poll always ends timedOut", arguments: backends)
    func timedOutBeatsStopped(_ backend: BackendKind) async throws {
        let result = try await onLoopThread(backend) { loop in
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            loop.perform { loop.stop() }
            return loop.run(timeout: .zero)
        }
        #expect(result == .timedOut)
    }

    @Test("stopped takes precedence over finished", arguments: backends)
    func stoppedBeatsFinished(_ backend: BackendKind) async throws {
        let (result, _) = try await tracedRun(backend) { loop, _ in
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in }
            loop.add(timer, to: .default)
            loop.perform {
                timer.invalidate()
                loop.stop()
            }
        }
        #expect(result == .stopped)
    }

    @Test("timers and blocks do not count as handled sources", arguments: backends)
    func timersAndBlocksAreNotSources(_ backend: BackendKind) async throws {
        let (result, trace) = try await traced(backend) { loop, trace in
            loop.add(try recordingTimer("timer", into: trace), to: .default)
            loop.perform { trace("block") }
            return loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
        }
        #expect(result == .finished)
        #expect(trace.all == ["block", "timer"])
    }

    @Test("a source handled by a nested run does not end the outer run as handledSource", arguments: backends)
    func nestedHandledDoesNotCount(_ backend: BackendKind) async throws {
        let (result, trace) = try await traced(backend) { loop, trace in
            let source = oneShotSource("source", into: trace)
            loop.add(source, to: .common)
            loop.addCommonMode("inner")
            loop.add(
                try Loop.Timer(after: .zero) { _ in
                    source.signal()
                    trace("inner \(loop.run("inner", timeout: generousDeadline, returnAfterSourceHandled: true))")
                }, to: .default)
            return loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
        }
        #expect(result == .finished)
        #expect(trace.all == ["source", "inner handledSource"])
    }

    @Test(
        "stop ends the innermost run after its pass; blocks of that pass still run; the outer run goes on",
        arguments: backends)
    func stopInnermost(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            let (keepAlive, _) = try keepAliveSource()
            loop.add(keepAlive, to: "inner")
            loop.add(
                try Loop.Timer(after: .zero) { _ in
                    loop.perform(in: ["inner"]) {
                        trace("inner block stops")
                        loop.stop()
                        loop.perform(in: ["inner"]) { trace("queued during drain, same pass") }
                    }
                    trace("inner \(loop.run("inner", timeout: generousDeadline))")
                }, to: .default)
            loop.add(try Loop.Timer(after: .milliseconds(1)) { _ in trace("outer goes on") }, to: .default)
        }
        #expect(result == .finished)
        #expect(trace.all == ["inner block stops", "queued during drain, same pass", "inner stopped", "outer goes on"])
    }

    @Test("stop from another thread wakes and stops the run", arguments: backends)
    func stopFromAnotherThread(_ backend: BackendKind) async throws {
        let (result, _) = try await tracedRun(backend) { loop, _ in
            let (keepAlive, _) = try keepAliveSource()
            loop.add(keepAlive, to: .default)
            _ = try whenAsleep(loop) {
                loop.stop()
            }
        }
        #expect(result == .stopped)
    }

    @Test("stop while the loop is not running has no effect on the next run", arguments: backends)
    func stopWhenIdle(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            loop.stop()
            loop.add(try recordingTimer("timer", after: .milliseconds(1), into: trace), to: .default)
        }
        #expect(result == .finished)
        #expect(trace.all == ["timer"])
    }

    @Test("a stop left unconsumed by an inner run dies with it", arguments: backends)
    func stopDiesWithRun(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            loop.add(
                try Loop.Timer(after: .zero) { _ in
                    let timer = try! Loop.Timer(after: .seconds(3600)) { _ in }
                    loop.add(timer, to: "inner")
                    // Stopped and timed out in the same pass: timedOut wins, the stop is dropped.
                    loop.perform(in: ["inner"]) { loop.stop() }
                    trace("inner \(loop.run("inner", timeout: .zero))")
                    timer.invalidate()
                }, to: .default)
            loop.add(try Loop.Timer(after: .milliseconds(2)) { _ in trace("outer timer") }, to: .default)
        }
        #expect(result == .finished)
        #expect(trace.all == ["inner timedOut", "outer timer"])
    }

    @Test("runs nest in the same mode, and the outer run resumes afterwards", arguments: backends)
    func nestSameMode(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            loop.add(
                try Loop.Timer(after: .zero, order: 0) { _ in
                    trace("outer timer")
                    loop.add(try! recordingTimer("nested timer", into: trace), to: .default)
                    trace("nested \(loop.run(timeout: generousDeadline, returnAfterSourceHandled: false))")
                }, to: .default)
        }
        #expect(result == .finished)
        #expect(trace.all == ["outer timer", "nested timer", "nested finished"])
    }

    @Test("isWaiting is true only while the loop sleeps", arguments: backends)
    func isWaiting(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            trace("idle \(loop.isWaiting)")
            loop.add(
                Loop.Observer(activities: [.beforeWaiting, .afterWaiting]) { _, activity in
                    trace("\(activity) \(loop.isWaiting)")
                }, to: .default)
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in trace("timer \(loop.isWaiting)") }
            loop.add(timer, to: .default)
            let seen = Latch()
            loop.add(
                Loop.Observer(activities: .beforeWaiting, repeats: false) { _, _ in
                    _ = try? TestThread {
                        // The timer cannot fire before this thread saw the loop asleep.
                        guard spinUntilWaiting(loop) else { return loop.stop() }
                        seen.open()
                        timer.nextFireInstant = .now
                    }
                }, to: .default)
            loop.run(timeout: generousDeadline)
            trace("saw sleeping \(seen.wait())")
        }
        #expect(
            trace.all == [
                "idle false", "beforeWaiting false", "afterWaiting false", "timer false", "saw sleeping true",
            ])
    }
}
