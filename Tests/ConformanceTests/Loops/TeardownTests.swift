import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › L5: Torn down with
/// its thread — releasing everything.
@Suite("Teardown")
struct TeardownTests {
    /// Runs in a process of its own (the `StressFixture` program, `TeardownScenario`), whose
    /// descriptors and memory no other test touches meanwhile.
    @Test(
        "10,000 threads, each with a loop, a timer and a pipe source, come and go: descriptors and memory stay flat",
        arguments: backends)
    func manyThreads(_ backend: BackendKind) async throws {
        let run = try await StressFixtureRun.run("teardown", backend)
        run.expectPassed()
        print(run.output, terminator: "")
    }

    @Test("blocks still queued when a loop's thread exits are released without running", arguments: backends)
    func queuedBlocksReleased(_ backend: BackendKind) async throws {
        let ran = AtomicInt()
        let released = AtomicInt()
        let posted = 3
        let loopRef = Ref<Loop>()
        let failure = Ref<String>()
        let thread = try TestThread {
            guard let loop = newLoop(backend, failure: failure) else { return }
            loopRef.value = loop
            // Queued for the common modes, for a mode that never runs, and from another thread;
            // the loop never runs.
            let tracked = (0..<posted).map { _ in Tracked(released) }
            loop.perform { [tracked = tracked[0]] in
                ran.increment()
                tracked.touch()
            }
            loop.perform(in: ["never run"]) { [tracked = tracked[1]] in
                ran.increment()
                tracked.touch()
            }
            do {
                try TestThread { [tracked = tracked[2]] in
                    loop.perform {
                        ran.increment()
                        tracked.touch()
                    }
                }.join()
            } catch {
                failure.value = "the posting thread could not be started: \(error)"
            }
        }
        #expect(thread.join())
        if let failure = failure.value { Issue.record(Comment(rawValue: failure)) }
        #expect(ran.value == 0, "a queued block ran during teardown")
        #expect(
            released.value == posted, "\(posted - released.value) blocks (and what they captured) were not released")
        // A block posted to the torn-down loop is refused: released at once, never run.
        let loop = try #require(loopRef.value)
        let late = AtomicInt()
        do {
            let tracked = Tracked(late)
            loop.perform {
                ran.increment()
                tracked.touch()
            }
        }
        #expect(late.value == 1, "a block posted after teardown was kept")
        #expect(ran.value == 0)
    }

    @Test(
        "a loop whose items' callbacks refer to it is freed when its thread exits, with its descriptors",
        arguments: backends)
    func callbacksReferringToTheirLoop(_ backend: BackendKind) async throws {
        final class Weak: @unchecked Sendable {
            // @unchecked: set on the loop's thread, read after it was joined.
            weak var loop: Loop?
            weak var port: Loop.Port<Int>?
        }
        let weak = Weak()
        let pipe = try Pipe()
        defer { pipe.close() }
        // Set by the loop's thread: what its run served and returned, or why it could not run.
        let outcome = Ref<(served: Int, result: Loop.RunResult)>()
        let failure = Ref<String>()
        let thread = try TestThread {
            let (loop, port): (Loop, Loop.Port<Int>)
            do {
                (loop, port) = (try Loop.current(backend: backend), try Loop.Port<Int>())
            } catch {
                failure.value = "the loop or its port could not be created: \(error)"
                return
            }
            (weak.loop, weak.port) = (loop, port)
            // The usual shape of a program: callbacks that stop or poke their own loop. Each is
            // served once; the loop's thread then exits with them still in the loop.
            let served = AtomicInt()
            let serve: @Sendable () -> Void = {
                if served.increment() == 4 { loop.stop() }
            }
            loop.add(Loop.Source(port: port) { _ in serve() }, to: .default)
            loop.add(
                try! Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                    pipe.drain()
                    serve()
                }, to: .default)
            let signalled = Loop.Source { serve() }
            loop.add(signalled, to: .default)
            loop.add(try! Loop.Timer(after: .zero) { _ in serve() }, to: .default)
            loop.add(Loop.Observer(activities: .exit) { _, _ in loop.wakeUp() }, to: .default)
            port.send(1)
            pipe.fill()
            signalled.signal()
            let result = loop.run(timeout: generousDeadline)
            outcome.value = (served.value, result)
        }
        #expect(thread.join())
        if let failure = failure.value { Issue.record(Comment(rawValue: failure)) }
        let (served, result) = try #require(outcome.value, "the loop's run never returned")
        // The port message, the pipe, the signal and the timer: the fourth stops the run.
        #expect(served == 4, "\(served) of the 4 callbacks were served")
        #expect(result == .stopped)
        #expect(weak.loop == nil, "the loop outlived its thread")
        #expect(weak.port == nil, "the port (and its descriptor) outlived the loop's thread")
    }
}

/// An object whose deinit counts itself: captured by a block, it tells when the block was
/// released.
final class Tracked: Sendable {
    private let released: AtomicInt
    init(_ released: AtomicInt) { self.released = released }
    func touch() {}
    deinit { released.increment() }
}
