import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › Version-0
/// sources, S1–S6; R4: Signalled sources.
@Suite("Version-0 sources")
struct Version0SourceTests {
    @Test("signalled sources run by order, then by the time of their first signal", arguments: backends)
    func performOrder(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let late = oneShotSource("order 0, signalled second", order: 0, into: trace)
            let early = oneShotSource("order 0, signalled first", order: 0, into: trace)
            let high = oneShotSource("order -1", order: -1, into: trace)
            let low = oneShotSource("order 5", order: 5, into: trace)
            for source in [late, early, high, low] { loop.add(source, to: .default) }
            low.signal()
            early.signal()
            late.signal()
            early.signal() // A second signal keeps the time of the first.
            high.signal()
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["order -1", "order 0, signalled first", "order 0, signalled second", "order 5"])
    }

    @Test("signalling twice before the pass performs the source once", arguments: backends)
    func signalCoalesces(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let source = recordingSource("perform", into: trace)
            loop.add(source, to: .default)
            source.signal()
            source.signal()
            loop.run(timeout: .zero)
            loop.run(timeout: .zero)
        }
        #expect(trace.all == ["perform"])
    }

    @Test("the signalled flag is cleared just before the source is performed", arguments: backends)
    func flagClearedBeforePerform(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let ref = WeakRef<Loop.Source>()
            let source = Loop.Source { trace("inside: signalled \(ref.value!.isSignalled)") }
            ref.value = source
            loop.add(source, to: .default)
            source.signal()
            trace("before: signalled \(source.isSignalled)")
            loop.run(timeout: .zero)
            trace("after: signalled \(source.isSignalled)")
        }
        #expect(trace.all == ["before: signalled true", "inside: signalled false", "after: signalled false"])
    }

    @Test("a source signalled during a pass waits for the next pass", arguments: backends)
    func signalDuringPassWaits(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.record([.beforeSources], into: trace)
            let second = oneShotSource("second", into: trace)
            let ref = WeakRef<Loop.Source>()
            let first = Loop.Source {
                trace("first")
                second.signal()
                ref.value!.invalidate()
            }
            ref.value = first
            loop.add(first, to: .default)
            loop.add(second, to: .default)
            first.signal()
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["beforeSources", "first", "beforeSources", "second"])
    }

    @Test("with returnAfterSourceHandled only the first signalled source runs", arguments: backends)
    func onlyFirstWhenReturning(_ backend: BackendKind) async throws {
        let (results, trace) = try await traced(backend) { loop, trace in
            let a = oneShotSource("a", order: 1, into: trace)
            let b = oneShotSource("b", order: 2, into: trace)
            loop.add(a, to: .default)
            loop.add(b, to: .default)
            a.signal()
            b.signal()
            let first = loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
            trace("returned")
            let second = loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
            return [first, second]
        }
        #expect(results == [.handledSource, .handledSource])
        #expect(trace.all == ["a", "returned", "b"])
    }

    @Test(
        "schedule and cancel run once per concrete mode, on the calling thread, with no lock held", arguments: backends)
    func scheduleAndCancel(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.addCommonMode("x")
            let ref = WeakRef<Loop.Source>()
            let source = Loop.Source(
                schedule: { l, mode in trace("schedule \(mode) contains=\(l.contains(ref.value!, in: mode))") },
                cancel: { _, mode in trace("cancel \(mode)") },
                perform: {}
            )
            ref.value = source
            loop.add(source, to: .common)
            loop.add(source, to: "y")
            loop.remove(source, from: "y")
            source.invalidate()
        }
        let all = trace.all
        #expect(Set(all.prefix(2)) == ["schedule \(Loop.Mode.default) contains=true", "schedule x contains=true"])
        #expect(all[2] == "schedule y contains=true")
        #expect(all[3] == "cancel y")
        #expect(Set(all.dropFirst(4)) == ["cancel \(Loop.Mode.default)", "cancel x"])
        #expect(all.count == 6)
    }

    @Test("a source invalidated inside its own callout is never performed again", arguments: backends)
    func invalidateInsideCallout(_ backend: BackendKind) async throws {
        let (valid, trace) = try await traced(backend) { loop, trace in
            let ref = WeakRef<Loop.Source>()
            let source = Loop.Source {
                trace("perform")
                ref.value!.invalidate()
                ref.value!.signal()
            }
            ref.value = source
            loop.add(source, to: .default)
            source.signal()
            let result = loop.run(timeout: generousDeadline)
            trace("\(result)")
            loop.add(source, to: .default) // Adding an invalidated source has no effect.
            return (loop.contains(source, in: .default), source.isValid)
        }
        #expect(trace.all == ["perform", "finished"])
        #expect(valid == (false, false))
    }

    @Test("two sources with the same callbacks are two items", arguments: backends)
    func identityNotCallbacks(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let perform: @Sendable () -> Void = { trace("perform") }
            let a = Loop.Source(perform: perform)
            let b = Loop.Source(perform: perform)
            loop.add(a, to: .default)
            loop.add(b, to: .default)
            #expect(a != b)
            a.signal()
            b.signal()
            loop.run(timeout: .zero)
        }
        #expect(trace.all == ["perform", "perform"])
    }

    @Test(
        "signal from another thread wakes a sleeping loop without wakeUp", .realTimeOnly(.otherThreadWhileAsleep),
        arguments: backends)
    func signalWakes(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            let ref = WeakRef<Loop.Source>()
            let source = Loop.Source {
                trace("performed")
                ref.value!.invalidate()
            }
            ref.value = source
            loop.add(source, to: .default)
            loop.add(
                Loop.Observer(activities: .beforeWaiting, repeats: false) { _, _ in
                    _ = try? TestThread {
                        // The loop is about to sleep; signal once it does.
                        guard spinUntilWaiting(loop) else { return loop.stop() }
                        source.signal()
                    }
                }, to: .default)
        }
        #expect(result == .finished)
        #expect(trace.all == ["performed"])
    }

    @Test("a source in two loops is removed from both by invalidate", arguments: backends)
    func twoLoops(_ backend: BackendKind) async throws {
        let source = Loop.Source {}
        let other = try await onLoopThread(backend) { loop in
            loop.add(source, to: .default)
            return loop
        }
        let found = try await onLoopThread(backend) { loop in
            loop.add(source, to: "m")
            source.invalidate()
            return [loop.contains(source, in: "m"), other.contains(source, in: .default)]
        }
        #expect(found == [false, false])
    }

    @Test("signal on a version-1 source has no effect", arguments: backends)
    func signalOnVersion1(_ backend: BackendKind) async throws {
        let (result, trace) = try await traced(backend) { loop, trace in
            let (source, _) = try keepAliveSource()
            loop.add(source, to: .default)
            source.signal()
            #expect(!source.isSignalled)
            return loop.run(timeout: .zero, returnAfterSourceHandled: true)
        }
        #expect(result == .timedOut)
        #expect(trace.all == [])
    }
}
