// LoopExecutorFactory exists with Swift 6.3 and later only (see its source file).
#if compiler(>=6.3)
import Glibc
import RunLoopKit
import TestSupport
import Testing

/// An `async` `main` whose main actor runs on the main loop, through `LoopExecutorFactory`.
///
/// Each case runs a child program (Tests/AsyncMainFixture and its siblings, sharing
/// Tests/AsyncMainChecks) whose body awaits a timer, a `DispatchQueue.main` block, a descriptor
/// source, a hop back from the default executor, `MainActor.run` from another thread and
/// `Task.sleep`, and prints after each await whether it is on the main thread, under the main
/// loop, while the loop runs.
@Suite("An async main on the main loop")
struct AsyncMainTests {
    /// What the checks print when every continuation ran on the running main loop.
    static let checks = [
        "the main loop uses the requested backend: true",
        "main executor is the main loop: true",
        "after a timer: main thread true, Loop.main true, running true",
        "after a DispatchQueue.main block: main thread true, Loop.main true, running true",
        "after a descriptor source read 42: main thread true, Loop.main true, running true",
        "nonisolated code ran off the main thread: true",
        "after nonisolated code: main thread true, Loop.main true, running true",
        "MainActor.run from a detached task ran on the main loop: true",
        "after the detached task: main thread true, Loop.main true, running true",
        "after Task.sleep: main thread true, Loop.main true, running true",
    ]

    @Test(
        "built with -disable-availability-checking, DefaultExecutorFactory = LoopExecutorFactory puts the async main on the main loop; returning exits with status 0",
        arguments: backends)
    func asyncMainWithFlag(_ backend: BackendKind) async throws {
        try await expectCleanRun(
            "AsyncMainFixture", [backend.rawValue], printed: Self.checks + ["returning", "exit handlers ran"])
    }

    @Test(
        "an error thrown by the async main is reported as Swift reports it: a fatal error naming it, and a trap",
        arguments: backends)
    func asyncMainThrows(_ backend: BackendKind) async throws {
        let run = try await ChildProgram.run("AsyncMainFixture", [backend.rawValue, "throw"])
        #expect(run.lines == Self.checks + ["throwing"])
        #expect(run.crashed && run.status == SIGILL)
        #expect(
            run.errors.contains(
                "Fatal error: Error raised at top level: AsyncMainChecks.AsyncMainFixtureError.requested"),
            "\(run.errors)")
    }

    @Test(
        "the same program built without the flag keeps Dispatch's main executor, and the checks see it",
        arguments: backends)
    func asyncMainWithoutFlag(_ backend: BackendKind) async throws {
        try await expectCleanRun(
            "AsyncMainFallbackFixture", [backend.rawValue],
            printed: [
                "the main loop uses the requested backend: true", "main executor is the main loop: false",
            ])
    }

    @Test(
        "a synchronous main that installs the factory (LoopExecutorFactory.install() or the runtime's _createExecutors) and runs Loop.main.run { … }",
        arguments: backends.flatMap { backend in ["install", "createExecutors"].map { (backend, $0) } })
    func synchronousMainInstalls(_ backend: BackendKind, _ how: String) async throws {
        try await expectCleanRun(
            "CreateExecutorsFixture", [backend.rawValue, how],
            printed: Self.checks + ["returning", "exit handlers ran"])
    }

    @Test(
        "the main actor's executor driven by hand: run() until stop(), which waits for a nested loop run to end; runUntil(_:); a stop() with no run active is not kept",
        arguments: backends)
    func executorRunAndStop(_ backend: BackendKind) async throws {
        try await expectCleanRun(
            "CreateExecutorsFixture", [backend.rawValue, "executor-run"],
            printed: [
                "job on the running main loop: true", "timer stops the nested run", "nested run: stopped",
                "run returned", "condition set", "runUntil returned", "served after a stop with no run active",
                "run returned",
            ])
    }

    @Test(
        "install() after the main actor was used, and twice: the main actor's earlier work still runs on the main loop",
        arguments: backends)
    func lateInstall(_ backend: BackendKind) async throws {
        try await expectCleanRun(
            "CreateExecutorsFixture", [backend.rawValue, "late-install"],
            printed: [
                "installed before: false", "installed: true",
                "task queued before install: on the running main loop true",
                "run: stopped",
            ])
    }

    @Test(
        "the main actor's executor run off the main thread, or inside a DispatchQueue.main block, traps with a message",
        arguments: [
            ("executor-off-main", "the main actor's executor (the main loop) can only be run on the main thread"),
            (
                "executor-in-drain",
                "the main actor's executor cannot run the main loop here: its default mode serves nothing (inside a DispatchQueue.main block?)"
            ),
        ])
    func executorMisuse(_ scenario: String, _ message: String) async throws {
        let run = try await ChildProgram.run("CreateExecutorsFixture", [BackendKind.default.rawValue, scenario])
        #expect(run.crashed, "\(run.lines)")
        #expect(run.errors.contains("RunLoopKit: " + message), "\(run.errors)")
        #expect(!run.lines.contains("no trap"))
    }
}
#endif
