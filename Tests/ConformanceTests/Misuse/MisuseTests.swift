import Dispatch
import Glibc
import RunLoopKit
import TestSupport
import Testing

/// Exit tests capture their arguments as Codable values: a built-in kind travels as its name.
extension BackendKind: Codable {
    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let kind = BackendKind(rawValue: name) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "no built-in backend \(name)"))
        }
        self = kind
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › L3: Run only on
/// its own thread; I3: Timers and observers belong to one loop; X3: Misuse traps.
///
/// Each misuse traps with a message that names it; an exit test runs it in a child process and
/// reads the message from its standard error.
@Suite("Misuse traps with a message")
struct MisuseTests {
    @Test("running a loop on another thread traps", arguments: backends)
    func runOnAnotherThread(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let loop = try loopOnAnotherThread(backend)
            loop.run(timeout: .zero)
        }
        #expect(stderr(of: result).contains("a loop runs only on its own thread"))
    }

    @Test("adding a timer to a second loop traps", arguments: backends)
    func timerInTwoLoops(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let timer = try Loop.Timer(after: .seconds(1)) { _ in }
            try loopOnAnotherThread(backend).add(timer, to: .default)
            try loopOnAnotherThread(backend).add(timer, to: .default)
        }
        #expect(stderr(of: result).contains("a timer can be added to one loop only"))
    }

    @Test("adding an observer to a second loop traps", arguments: backends)
    func observerInTwoLoops(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let observer = Loop.Observer(activities: .entry) { _, _ in }
            try loopOnAnotherThread(backend).add(observer, to: .default)
            try loopOnAnotherThread(backend).add(observer, to: .default)
        }
        #expect(stderr(of: result).contains("an observer can be added to one loop only"))
    }
}

extension MisuseTests {
    @Test("running .common is reported once per process on standard error", arguments: backends)
    func commonReportedOnce(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let own = try Loop.current(backend: backend)
            own.run(.common)
            own.run(.common)
        }
        let text = stderr(of: result)
        #expect(text.ranges(of: "Loop.run(.common) is a usage error").count == 1)
    }
}

/// Bad input that traps: each row of Tests/README.md whose outcome is a trap.
extension MisuseTests {
    @Test("Loop.run(_:_:) with an async body on a loop that is not the main loop traps", arguments: backends)
    func asyncRunOffMainLoop(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let loop = try loopOnAnotherThread(backend)
            _ = try loop.run { 1 }
        }
        #expect(stderr(of: result).contains("Loop.run(_:_:) with an async body runs the main loop only"))
    }

    @Test("Loop.main.run(_:_:) in a mode that is not common (or in .common) traps", arguments: backends)
    func asyncRunInNonCommonMode(_ backend: BackendKind) async throws {
        for mode in ["tracking", Loop.Mode.common.name] {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [backend, mode = mode as String] in
                alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
                let main = try Loop.main(creatingWith: backend.factory)
                _ = try main.run(Loop.Mode(mode)) { 1 }
            }
            #expect(stderr(of: result).contains("Loop.run(_:_:): \(mode) is not a common mode"))
        }
    }

    @Test("Loop.main.run(_:_:) off the main thread traps as running a loop elsewhere does", arguments: backends)
    func asyncRunOffMainThread(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let main = try Loop.main(creatingWith: backend.factory)
            try TestThread { _ = try? main.run { 1 } }.join()
        }
        #expect(stderr(of: result).contains("a loop runs only on its own thread"))
    }

    @Test("Loop.withBackend(_:) off the loop's thread traps", arguments: backends)
    func withBackendOffThread(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let loop = try loopOnAnotherThread(backend)
            loop.withBackend { _ in }
        }
        #expect(stderr(of: result).contains("Loop.withBackend(_:) called on a thread that is not"))
    }

    #if Libevent
    @Test(
        "Loop.withEventBase(_:) on a loop that is not a libevent loop traps",
        arguments: backends.filter { $0 != .libevent })
    func withEventBaseOnOtherBackend(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            try TestThread { (try? Loop.current(backend: backend))?.withEventBase { _ in } }.join()
        }
        #expect(stderr(of: result).contains("which is not a libevent loop"))
    }
    #endif

    @Test("Loop.checkIsolated() off the loop's thread traps", arguments: backends)
    func checkIsolatedOffThread(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            try loopOnAnotherThread(backend).checkIsolated()
        }
        #expect(stderr(of: result).contains("expected to run on"))
    }

    @Test("LoopThread.stop() on its own thread traps", arguments: backends)
    func loopThreadStopOnItsOwnThread(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let thread = try LoopThread(backend: backend)
            thread.perform { thread.stop() }
            // The trap ends the process; if it did not come, exit with success and fail the test.
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .seconds(30))
        }
        #expect(stderr(of: result).contains("LoopThread.stop() called on its own thread"))
    }

    /// The block runs, then the loop's run exits, then the loop is torn down as its thread
    /// ends (the source's cancel callback, and the loop itself freed): the loop does not keep
    /// serving a thread nobody can stop any more.
    @Test(
        "dropping a LoopThread's last reference on its own thread ends its loop and its thread without a trap",
        arguments: backends)
    func loopThreadReleasedOnItsOwnThread(_ backend: BackendKind) async throws {
        let trace = Trace()
        let tornDown = Latch()
        let weakLoop = WeakRef<Loop>()
        var thread: LoopThread? = try LoopThread(backend: backend)
        do {
            let loop = thread!.loop
            weakLoop.value = loop
            // Its cancel callback runs when the loop's teardown takes it out of the mode.
            loop.add(
                Loop.Source(
                    cancel: { _, _ in
                        trace("teardown")
                        tornDown.open()
                    }, perform: {}), to: .default)
            loop.add(Loop.Observer(activities: .exit) { _, _ in trace("run exited") }, to: .default)
        }
        let gate = Latch()
        // The block holds the only other reference; it is released on the loop's thread.
        thread!.perform { [thread] in
            gate.wait()
            withExtendedLifetime(thread) {}
        }
        // Runs after the block that drops the last reference: the loop is still serving then.
        weakLoop.value?.perform(in: [.common]) { trace("later block") }
        thread = nil
        gate.open()
        guard tornDown.wait(for: hangDeadline) else {
            Issue.record("the loop was never torn down: its thread did not end (\(trace.all))")
            return
        }
        #expect(trace.all == ["later block", "run exited", "teardown"])
        // The thread's binding held the loop until its teardown; nothing else does.
        #expect(waitUntil(within: hangDeadline) { weakLoop.value == nil }, "the loop outlived its thread")
    }
}

private func stderr(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// A loop owned by a new thread that stays alive for the rest of the (child) process.
private func loopOnAnotherThread(_ backend: BackendKind) throws -> Loop {
    let made = DispatchSemaphore(value: 0)
    let loop = Ref<Loop>()
    _ = try TestThread {
        loop.value = try? Loop.current(backend: backend)
        made.signal()
        DispatchSemaphore(value: 0).wait()
    }
    made.wait()
    return loop.value!
}
