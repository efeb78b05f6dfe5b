import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › Observers,
/// O1–O3; One run, R2: Entry to R10: Exit.
@Suite("Observers and the shape of a run")
struct ObserverTests {
    @Test("a run serving one timer notifies entry, one pass, exit", arguments: backends)
    func runShape(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            loop.record(into: trace)
            loop.add(try recordingTimer("timer", after: .milliseconds(1), into: trace), to: .default)
        }
        #expect(result == .finished)
        #expect(
            trace.all == ["entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "timer", "exit"])
    }

    @Test("a pass that performed a version-0 source polls: no beforeWaiting or afterWaiting", arguments: backends)
    func version0PassPolls(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.record(into: trace)
            let source = oneShotSource("source", into: trace)
            loop.add(source, to: .default)
            source.signal()
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["entry", "beforeTimers", "beforeSources", "source", "exit"])
    }

    @Test("a zero timeout polls once: no sleep, result timedOut", arguments: backends)
    func pollShape(_ backend: BackendKind) async throws {
        let (result, trace) = try await traced(backend) { loop, trace in
            loop.record(into: trace)
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            return loop.run(timeout: .zero)
        }
        #expect(result == .timedOut)
        #expect(trace.all == ["entry", "beforeTimers", "beforeSources", "exit"])
    }

    @Test("a negative timeout polls like zero", arguments: backends)
    func negativeTimeoutPolls(_ backend: BackendKind) async throws {
        let result = try await onLoopThread(backend) { loop in
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            return loop.run(timeout: .zero - .seconds(1))
        }
        #expect(result == .timedOut)
    }

    @Test("observers are called in ascending order, ties in the order added", arguments: backends)
    func observerOrder(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            for (name, order) in [("b0", 0), ("c5", 5), ("a-3", -3), ("d0", 0)] {
                loop.add(Loop.Observer(activities: .entry, order: order) { _, _ in trace(name) }, to: .default)
            }
            loop.add(try Loop.Timer(after: .zero) { _ in }, to: .default)
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["a-3", "b0", "d0", "c5"])
    }

    @Test("an observer added during a notification misses it", arguments: backends)
    func addedDuringNotificationMisses(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let late = Loop.Observer(activities: [.beforeTimers, .exit], order: 10) { _, activity in
                trace("late \(activity)")
            }
            loop.add(
                Loop.Observer(activities: .beforeTimers, repeats: false) { _, _ in
                    trace("adder")
                    loop.add(late, to: .default)
                }, to: .default)
            loop.add(try Loop.Timer(after: .zero) { _ in }, to: .default)
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["adder", "late exit"])
    }

    @Test("a non-repeating observer is invalidated after its first call", arguments: backends)
    func nonRepeating(_ backend: BackendKind) async throws {
        let (valid, trace) = try await traced(backend) { loop, trace in
            let observer = Loop.Observer(activities: .allActivities, repeats: false) { observer, activity in
                trace("\(activity) valid=\(observer.isValid)")
            }
            loop.add(observer, to: .default)
            loop.add(try Loop.Timer(after: .zero) { _ in }, to: .default)
            loop.run(timeout: generousDeadline)
            return observer.isValid
        }
        #expect(trace.all == ["entry valid=true"])
        #expect(!valid)
    }

    @Test("an observer whose callback is running is not called from a nested run", arguments: backends)
    func noReentrantObserver(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let nested = Atomic<Bool>(false)
            loop.add(
                Loop.Observer(activities: .entry) { _, _ in
                    trace("entry observer")
                    guard !nested.exchange(true, ordering: .relaxed) else { return }
                    let timer = try! Loop.Timer(after: .zero) { _ in trace("nested timer") }
                    loop.add(timer, to: "inner")
                    loop.add(Loop.Observer(activities: .entry) { _, _ in trace("inner entry observer") }, to: "inner")
                    trace("nested \(loop.run("inner", timeout: generousDeadline))")
                }, to: .common)
            loop.addCommonMode("inner")
            loop.add(try Loop.Timer(after: .zero) { _ in trace("outer timer") }, to: .default)
            loop.run(timeout: generousDeadline)
        }
        #expect(
            trace.all == ["entry observer", "inner entry observer", "nested timer", "nested finished", "outer timer"])
    }

    @Test("an observer invalidated inside its callback is not called again", arguments: backends)
    func invalidateInsideCallback(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.add(
                Loop.Observer(activities: .allActivities) { observer, activity in
                    trace("\(activity)")
                    if activity == .beforeSources { observer.invalidate() }
                }, to: .default)
            loop.add(try Loop.Timer(after: .zero) { _ in }, to: .default)
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["entry", "beforeTimers", "beforeSources"])
    }

    @Test("stop() from an entry observer ends the run before any pass", arguments: backends)
    func stopFromEntry(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            loop.record(into: trace)
            loop.add(Loop.Observer(activities: .entry) { _, _ in loop.stop() }, to: .default)
            loop.add(try recordingTimer("timer", into: trace), to: .default)
        }
        #expect(result == .stopped)
        #expect(trace.all == ["entry", "exit"])
    }

    @Test("a mode emptied by a beforeWaiting observer is not slept in: the run finishes", arguments: backends)
    func emptiedByBeforeWaiting(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            loop.record(into: trace)
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in trace("timer") }
            loop.add(Loop.Observer(activities: .beforeWaiting) { _, _ in timer.invalidate() }, to: .default)
            loop.add(timer, to: .default)
        }
        #expect(result == .finished)
        #expect(trace.all == ["entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "exit"])
    }

    @Test("a mode emptied during a pass ends the run without sleeping", arguments: backends)
    func emptiedDuringPass(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            loop.record(into: trace)
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in trace("timer") }
            loop.add(timer, to: .default)
            loop.perform { timer.invalidate() }
        }
        #expect(result == .finished)
        #expect(trace.all == ["entry", "beforeTimers", "beforeSources", "exit"])
    }
}
