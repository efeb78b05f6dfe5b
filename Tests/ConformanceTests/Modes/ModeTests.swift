import RunLoopKit
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › Modes, M1–M6;
/// R1: Nothing to run.
@Suite("Modes and common modes")
struct ModeTests {
    /// Where the observers are, and which mode runs: one that was never made, or the
    /// observers' own (a mode with only observers is empty).
    static let emptyRuns: [(observed: Loop.Mode, run: Loop.Mode)] = [
        ("elsewhere", "never-made"), ("watched", "watched"),
    ]

    @Test(
        "running a mode that does not exist, or one with only observers (empty), returns finished at once, calling no observer",
        arguments: backends, emptyRuns)
    func emptyModeRun(_ backend: BackendKind, _ modes: (observed: Loop.Mode, run: Loop.Mode)) async throws {
        let (result, trace) = try await traced(backend) { loop, trace in
            loop.record(in: modes.observed, into: trace)
            return loop.run(modes.run, timeout: generousDeadline)
        }
        #expect(result == .finished)
        #expect(trace.all == [])
    }

    @Test("running .common returns finished at once and calls no observer", arguments: backends)
    func runningCommonIsMisuse(_ backend: BackendKind) async throws {
        let (results, trace) = try await traced(backend) { loop, trace in
            loop.record(in: .common, into: trace)
            let (source, _) = try keepAliveSource()
            loop.add(source, to: .common)
            return [loop.run(.common, timeout: generousDeadline), loop.run(.common, timeout: generousDeadline)]
        }
        #expect(results == [.finished, .finished])
        #expect(trace.all == [])
    }

    @Test("the common modes start as just .default", arguments: backends)
    func initialCommonModes(_ backend: BackendKind) async throws {
        let modes = try await onLoopThread(backend) { loop in loop.commonModes }
        #expect(modes == [.default])
    }

    @Test("an item added to .common is in every common mode", arguments: backends)
    func commonReachesEveryCommonMode(_ backend: BackendKind) async throws {
        let found = try await onLoopThread(backend) { loop in
            loop.addCommonMode("tracking")
            let source = Loop.Source {}
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in }
            let observer = Loop.Observer(activities: .entry) { _, _ in }
            loop.add(source, to: .common)
            loop.add(timer, to: .common)
            loop.add(observer, to: .common)
            return [Loop.Mode.default, "tracking", .common].flatMap { mode in
                [loop.contains(source, in: mode), loop.contains(timer, in: mode), loop.contains(observer, in: mode)]
            } + [loop.contains(source, in: "other")]
        }
        #expect(found == Array(repeating: true, count: 9) + [false])
    }

    @Test("a mode made common later receives every common item at that moment", arguments: backends)
    func lateCommonModeGetsItems(_ backend: BackendKind) async throws {
        let (result, trace) = try await traced(backend) { loop, trace in
            let observer = Loop.Observer(activities: .entry) { _, _ in trace("entry observer") }
            let source = oneShotSource("source", into: trace)
            let timer = try recordingTimer("timer", into: trace)
            loop.add(observer, to: .common)
            loop.add(source, to: .common)
            loop.add(timer, to: .common)
            source.signal()
            loop.addCommonMode("late")
            return loop.run("late", timeout: generousDeadline, returnAfterSourceHandled: false)
        }
        #expect(result == .finished)
        #expect(trace.all == ["entry observer", "source", "timer"])
    }

    @Test("making a mode common creates it", arguments: backends)
    func addCommonModeCreatesMode(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.addCommonMode("created")
            #expect(loop.commonModes == [.default, "created"])
            loop.perform { trace("common block") }
            #expect(loop.run("created", timeout: generousDeadline) == .finished)
        }
        #expect(trace.all == ["common block"])
    }

    @Test("items of one mode are not served while another mode runs", arguments: backends)
    func modesAreIsolated(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let source = oneShotSource("A source", into: trace)
            loop.add(source, to: "A")
            loop.add(try recordingTimer("A timer", into: trace), to: "A")
            loop.add(try recordingTimer("B timer", into: trace), to: "B")
            source.signal()
            #expect(loop.run("B", timeout: generousDeadline) == .finished)
            trace("--")
            #expect(loop.run("A", timeout: generousDeadline) == .finished)
        }
        #expect(trace.all == ["B timer", "--", "A source", "A timer"])
    }

    @Test("adding an item twice to one mode has no effect", arguments: backends)
    func addTwiceIsNoOp(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let source = Loop.Source(schedule: { _, mode in trace("schedule \(mode)") }) { trace("perform") }
            loop.add(source, to: .default)
            loop.add(source, to: .default)
            loop.add(source, to: .common)
            let observer = Loop.Observer(activities: .entry) { _, _ in trace("entry") }
            loop.add(observer, to: .default)
            loop.add(observer, to: .default)
            source.signal()
            loop.run(timeout: .zero)
        }
        #expect(trace.all == ["schedule \(Loop.Mode.default)", "entry", "perform"])
    }

    @Test("removing from .common removes from every common mode", arguments: backends)
    func removeFromCommon(_ backend: BackendKind) async throws {
        let found = try await onLoopThread(backend) { loop in
            loop.addCommonMode("other")
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in }
            loop.add(timer, to: .common)
            loop.remove(timer, from: .common)
            return [
                loop.contains(timer, in: .default), loop.contains(timer, in: "other"),
                loop.contains(timer, in: .common), timer.isValid,
            ]
        }
        #expect(found == [false, false, false, true])
    }

    @Test("currentMode is nil outside a run and names the innermost run's mode", arguments: backends)
    func currentMode(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            trace("before \(loop.currentMode?.name ?? "nil")")
            let inner = try Loop.Timer(after: .zero) { _ in trace("inner \(loop.currentMode?.name ?? "nil")") }
            loop.add(inner, to: "inner")
            let outer = try Loop.Timer(after: .zero) { _ in
                trace("outer \(loop.currentMode?.name ?? "nil")")
                loop.run("inner", timeout: generousDeadline)
                trace("outer again \(loop.currentMode?.name ?? "nil")")
            }
            loop.add(outer, to: "outer")
            loop.run("outer", timeout: generousDeadline)
            trace("after \(loop.currentMode?.name ?? "nil")")
        }
        #expect(trace.all == ["before nil", "outer outer", "inner inner", "outer again outer", "after nil"])
    }

    @Test("a block queued for .common runs in a mode made common after it was queued", arguments: backends)
    func commonResolvedAtDrain(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.perform(in: [.common]) { trace("block") }
            loop.addCommonMode("later")
            loop.run("later", timeout: generousDeadline)
        }
        #expect(trace.all == ["block"])
    }

    @Test("a common source removed from .default still joins a mode made common later, fully", arguments: backends)
    func commonSourceAfterRemoval(_ backend: BackendKind) async throws {
        let (found, trace) = try await traced(backend) { loop, trace in
            let source = Loop.Source(cancel: { _, mode in trace("cancel \(mode)") }) {
                trace("performed in \(loop.currentMode!)")
            }
            loop.add(source, to: .common)
            loop.remove(source, from: .default)
            loop.addCommonMode("x")
            source.signal()
            loop.run("x", timeout: .zero)
            source.invalidate()
            return loop.contains(source, in: "x")
        }
        #expect(!found)
        #expect(trace.all == ["cancel \(Loop.Mode.default)", "performed in x", "cancel x"])
    }
}
