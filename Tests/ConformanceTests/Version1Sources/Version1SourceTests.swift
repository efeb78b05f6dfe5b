import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › Version-1
/// sources, D1–D8; R7: Everything ready, in one pass; X1: Bad input is refused.
@Suite("Version-1 sources: descriptors and ports")
struct Version1SourceTests {
    @Test("a readable pipe calls its handler with .readable and counts as a handled source", arguments: backends)
    func readablePipe(_ backend: BackendKind) async throws {
        try await withPipe { pipe in
            let (result, trace) = try await traced(backend) { loop, trace in
                let source = try Loop.Source(fileDescriptor: pipe.readEnd, interest: .readable) { readiness in
                    trace("readable \(readiness.contains(.readable)), drained \(pipe.drain())")
                }
                loop.add(source, to: .default)
                pipe.fill(3)
                return loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
            }
            #expect(result == .handledSource)
            #expect(trace.all == ["readable true, drained 3"])
        }
    }

    @Test(
        "level-triggered: a pipe left with data fires each pass until drained; RunLoopKit never reads it",
        arguments: backends)
    func levelTriggered(_ backend: BackendKind) async throws {
        let trace = Trace()
        let pipe = try Pipe()
        defer { pipe.close() }
        try await onLoopThread(backend) { loop in
            let calls = Atomic<Int>(0)
            let source = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                let call = calls.add(1, ordering: .relaxed).newValue
                trace("call \(call)")
                if call == 3 { trace("drained \(pipe.drain())") }
            }
            loop.add(source, to: .default)
            pipe.fill(5)
            for _ in 0..<3 { trace("\(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true))") }
            trace("\(loop.run(timeout: .zero, returnAfterSourceHandled: true))")
            source.invalidate()
        }
        #expect(
            trace.all == [
                "call 1", "handledSource", "call 2", "handledSource", "call 3", "drained 5", "handledSource",
                "timedOut",
            ])
    }

    @Test("a writable interest reports .writable", arguments: backends)
    func writable(_ backend: BackendKind) async throws {
        let trace = Trace()
        let pipe = try Pipe()
        defer { pipe.close() }
        try await onLoopThread(backend) { loop in
            let ref = WeakRef<Loop.Source>()
            let source = try Loop.Source(fileDescriptor: pipe.writeEnd, interest: .writable) { readiness in
                trace("writable \(readiness.contains(.writable)) readable \(readiness.contains(.readable))")
                ref.value!.invalidate()
            }
            ref.value = source
            loop.add(source, to: .default)
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["writable true readable false"])
    }

    @Test("a closed peer is reported as a hang-up to a readable interest", arguments: backends)
    func hangup(_ backend: BackendKind) async throws {
        let trace = Trace()
        let pipe = try Pipe()
        defer { close(pipe.readEnd) }
        try await onLoopThread(backend) { loop in
            let ref = WeakRef<Loop.Source>()
            let source = try Loop.Source(fileDescriptor: pipe.readEnd) { readiness in
                trace("hangup \(readiness.contains(.hangup)) read \(read(pipe.readEnd, nil, 0))")
                ref.value!.invalidate()
            }
            ref.value = source
            loop.add(source, to: .default)
            close(pipe.writeEnd)
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["hangup true read 0"])
    }

    @Test("ready version-1 sources are handled by order", arguments: backends)
    func handledByOrder(_ backend: BackendKind) async throws {
        let trace = Trace()
        let pipes = try (0..<3).map { _ in try Pipe() }
        defer { pipes.forEach { $0.close() } }
        try await onLoopThread(backend) { loop in
            let orders = [2, -1, 0]
            for (pipe, order) in zip(pipes, orders) {
                let ref = WeakRef<Loop.Source>()
                let source = try Loop.Source(fileDescriptor: pipe.readEnd, order: order) { _ in
                    trace("order \(order)")
                    ref.value!.invalidate()
                }
                ref.value = source
                loop.add(source, to: .default)
                pipe.fill()
            }
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["order -1", "order 0", "order 2"])
    }

    @Test("two sources on one descriptor both hear about it", arguments: backends)
    func sharedDescriptor(_ backend: BackendKind) async throws {
        let trace = Trace()
        let pipe = try Pipe()
        defer { pipe.close() }
        try await onLoopThread(backend) { loop in
            let first = try Loop.Source(fileDescriptor: pipe.readEnd, order: 1) { _ in trace("first") }
            let second = try Loop.Source(fileDescriptor: pipe.readEnd, order: 2) { _ in
                trace("second drained \(pipe.drain())")
                loop.stop()
            }
            loop.add(first, to: .default)
            loop.add(second, to: .default)
            pipe.fill()
            #expect(loop.run(timeout: generousDeadline) == .stopped)
            first.invalidate()
            second.invalidate()
        }
        #expect(trace.all == ["first", "second drained 1"])
    }

    @Test(
        "a source removed from the running mode is not called, even when its descriptor is ready", arguments: backends)
    func removedNotCalled(_ backend: BackendKind) async throws {
        let trace = Trace()
        let pipes = try (0..<2).map { _ in try Pipe() }
        defer { pipes.forEach { $0.close() } }
        try await onLoopThread(backend) { loop in
            let victimRef = Ref<Loop.Source>()
            let first = try Loop.Source(fileDescriptor: pipes[0].readEnd, order: 0) { _ in
                trace("first removes second")
                loop.remove(victimRef.value!, from: .default)
                pipes[0].drain()
            }
            let second = try Loop.Source(fileDescriptor: pipes[1].readEnd, order: 1) { _ in trace("second") }
            victimRef.value = second
            loop.add(first, to: .default)
            loop.add(second, to: .default)
            pipes[0].fill()
            pipes[1].fill()
            loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
            first.invalidate()
            #expect(second.isValid)
            #expect(loop.run(timeout: .zero) == .finished)
        }
        #expect(trace.all == ["first removes second"])
    }

    @Test("a stale event (descriptor closed and reused within one batch) is dropped", arguments: backends)
    func staleEventDropped(_ backend: BackendKind) async throws {
        let trace = Trace()
        let keep = try Pipe()
        defer { keep.close() }
        try await onLoopThread(backend) { loop in
            loop.record([.afterWaiting], into: trace)
            let old = try Pipe()
            let oldFD = old.readEnd
            let replacement = Ref<Pipe>()
            let oldRef = Ref<Loop.Source>()
            let newRef = WeakRef<Loop.Source>()
            let first = try Loop.Source(fileDescriptor: keep.readEnd, order: 0) { _ in
                trace("first")
                keep.drain()
                // Invalidate and close the other ready descriptor, then reuse its number.
                oldRef.value!.invalidate()
                // Close the old file and reuse its number for a new one, atomically: dup2,
                // because tests running in parallel would take a number freed by close.
                let fresh = try! Pipe()
                replacement.value = fresh
                dup2(fresh.readEnd, oldFD)
                close(old.writeEnd)
                let source = try! Loop.Source(fileDescriptor: oldFD) { _ in
                    trace("new source")
                    newRef.value!.invalidate()
                    close(oldFD)
                }
                newRef.value = source
                fresh.fill()
                loop.add(source, to: .default)
            }
            let oldSource = try Loop.Source(fileDescriptor: oldFD, order: 1) { _ in trace("old source") }
            oldRef.value = oldSource
            loop.add(first, to: .default)
            loop.add(oldSource, to: .default)
            keep.fill()
            old.fill()
            loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
            loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
            first.invalidate()
            replacement.value?.close()
        }
        #expect(trace.all == ["afterWaiting", "first", "afterWaiting", "new source"])
    }

    @Test(
        "a nested run in another mode neither serves nor spins on the outer mode's ready descriptor",
        arguments: backends)
    func nestedModeIsolation(_ backend: BackendKind) async throws {
        let trace = Trace()
        let pipe = try Pipe()
        defer { pipe.close() }
        try await onLoopThread(backend) { loop in
            let passes = Atomic<Int>(0)
            loop.add(
                Loop.Observer(activities: .afterWaiting) { _, _ in passes.add(1, ordering: .relaxed) }, to: "inner")
            let ref = WeakRef<Loop.Source>()
            let source = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                trace("outer source")
                ref.value!.invalidate()
            }
            ref.value = source
            loop.add(source, to: .default)
            let (keepAlive, _) = try keepAliveSource()
            loop.add(keepAlive, to: "inner")
            let timer = try Loop.Timer(after: .zero) { _ in
                pipe.fill()
                trace("inner \(loop.run("inner", timeout: .milliseconds(20)))")
                trace("inner passes \(passes.load(ordering: .relaxed))")
            }
            loop.add(timer, to: .default)
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["inner timedOut", "inner passes 1", "outer source"])
    }

    @Test(
        "a port delivers every message in order, from any thread, waking the loop",
        .realTimeOnly(.otherThreadWhileAsleep), arguments: backends)
    func portMessages(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            let port = try Loop.Port<Int>()
            let source = Loop.Source(port: port) { message in
                trace("message \(message)")
                if message == 100 { loop.stop() }
            }
            loop.add(source, to: .default)
            _ = try TestThread {
                for message in 1...100 { port.send(message) }
            }
        }
        #expect(result == .stopped)
        #expect(trace.all == (1...100).map { "message \($0)" })
    }

    @Test("every message queued before the port is found ready is delivered in that pass", arguments: backends)
    func portBatch(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.record([.afterWaiting], into: trace)
            let port = try Loop.Port<String>()
            let source = Loop.Source(port: port) { trace($0) }
            loop.add(source, to: .default)
            port.send("a")
            port.send("b")
            port.send("c")
            #expect(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource)
            source.invalidate()
        }
        #expect(trace.all == ["afterWaiting", "a", "b", "c"])
    }
}

/// R7: a timer due and a descriptor ready in the same wait are both handled in that pass, the
/// timer first, whatever their orders.
extension Version1SourceTests {
    @Test(
        "a timer due and a descriptor ready in the same wait are handled in one pass, the timer first",
        arguments: backends, [false, true])
    func timerThenDescriptorInOnePass(_ backend: BackendKind, polls: Bool) async throws {
        let trace = Trace()
        let pipe = try Pipe()
        defer { pipe.close() }
        try await onLoopThread(backend) { loop in
            loop.record([.beforeTimers, .beforeWaiting, .afterWaiting], into: trace)
            // The source's order is the lower: an order-only sort would handle it first.
            let source = try Loop.Source(fileDescriptor: pipe.readEnd, order: -100) { _ in
                trace("descriptor, drained \(pipe.drain())")
            }
            let timer = try Loop.Timer(fireAt: loop.now, order: 100) { _ in trace("timer") }
            loop.add(source, to: .default)
            loop.add(timer, to: .default)
            pipe.fill(1)
            // A poll's one wait, or a run's first wait (a due timer makes it return at once):
            // either way the one wait finds both.
            trace("\(loop.run(timeout: polls ? .zero : generousDeadline, returnAfterSourceHandled: true))")
            source.invalidate()
        }
        let wait = polls ? [] : ["beforeWaiting", "afterWaiting"]
        #expect(trace.all == ["beforeTimers"] + wait + ["timer", "descriptor, drained 1", "handledSource"])
    }
}
