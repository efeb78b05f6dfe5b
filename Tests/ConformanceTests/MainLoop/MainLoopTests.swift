import RunLoopKit
import TestSupport
import Testing

/// The main loop drains `DispatchQueue.main` (and so `@MainActor` work) in its common modes.
/// Each scenario runs in a child program whose synchronous `main` runs `Loop.main`
/// (Tests/MainLoopFixture): the test runner's own main thread belongs to libdispatch.
@Suite("Main loop and the dispatch main queue")
struct MainLoopTests {
    @Test("main-queue blocks run in default and custom common modes, not in a non-common mode", arguments: backends)
    func commonModesOnly(_ backend: BackendKind) async throws {
        #expect(
            try await runMainLoopFixture(backend, "modes") == [
                "private: timedOut",
                "block 1 in custom", "custom: handledSource",
                "block 2 in \(Loop.Mode.default)", "default: handledSource",
            ])
    }

    @Test(
        "a drain runs the blocks queued before it, not those queued during it; it counts as a handled source",
        arguments: backends)
    func drainSnapshot(_ backend: BackendKind) async throws {
        #expect(
            try await runMainLoopFixture(backend, "drain") == [
                "first", "second", "run: handledSource",
                "queued during the drain", "run: handledSource",
            ])
    }

    @Test(
        "a run nested in a main-queue block does not serve the queue, and its common mode is empty", arguments: backends
    )
    func nestedInsideDrain(_ backend: BackendKind) async throws {
        #expect(
            try await runMainLoopFixture(backend, "nested") == [
                "nested: finished", "nested timer", "nested with timer: finished",
                "outer: handledSource", "later block", "outer: handledSource",
            ])
    }

    @Test("the main loop's first run with nothing queued sleeps once, until its timeout", arguments: backends)
    func idleFirstRun(_ backend: BackendKind) async throws {
        #expect(
            try await runMainLoopFixture(backend, "idle") == [
                "run: timedOut", "passes 1, spurious 0, every wakeup the timeout's: true",
            ])
    }

    @Test("blocks queued before the main loop first ran are drained by its first run", arguments: backends)
    func queuedBeforeFirstRun(_ backend: BackendKind) async throws {
        #expect(try await runMainLoopFixture(backend, "queued-first") == ["block", "block 2", "run: handledSource"])
    }

    @Test(
        "a sandbox that refuses epoll_pwait2 with EPERM: waits fall back to epoll_wait, timers fire",
        arguments: backends)
    func sandboxRefusesEpollPwait2(_ backend: BackendKind) async throws {
        #expect(try await runMainLoopFixture(backend, "sandbox-epoll_pwait2") == ["timer", "run: stopped"])
    }

    @Test(
        "a sandbox that refuses io_uring_setup: the io_uring backend throws blockedBySandbox",
        .enabled(if: BackendKind(rawValue: "uring") != nil, "this build does not include io_uring"))
    func sandboxRefusesIoUring() async throws {
        let uring = try #require(BackendKind(rawValue: "uring"))
        #expect(
            try await runMainLoopFixture(uring, "sandbox-io_uring_setup") == [
                "uring unavailable: blocked by sandbox (io_uring_setup, errno 1)"
            ])
    }

    @Test("@MainActor tasks run on the main loop's thread and complete", arguments: backends)
    func mainActorTasks(_ backend: BackendKind) async throws {
        #expect(
            try await runMainLoopFixture(backend, "mainactor") == [
                "task on main thread: true", "task resumed", "run: stopped",
            ])
    }

    @Test("Loop.main.run { async body } runs the body on the main loop and returns its result", arguments: backends)
    func asyncBody(_ backend: BackendKind) async throws {
        #expect(try await runMainLoopFixture(backend, "async") == ["value 42"])
    }

    @Test("the README's program: a timer, a DispatchQueue.main block and a @MainActor task", arguments: backends)
    func readmeExample(_ backend: BackendKind) async throws {
        let lines = try await runMainLoopFixture(backend, "readme")
        // The timer may fall due before or after the first drain on a loaded machine; the
        // queue's blocks keep their FIFO order.
        #expect(Set(lines.prefix(3)) == ["main queue block", "main actor task", "timer"])
        #expect(lines.filter { $0 != "timer" }.prefix(2) == ["main queue block", "main actor task"])
        #expect(lines.dropFirst(3) == ["run: stopped"])
    }
}
