// A program whose synchronous `main` runs RunLoopKit's main loop, for the conformance tests
// that need the real main thread (the test runner's own main thread is libdispatch's).
//
// Usage: MainLoopFixture BACKEND SCENARIO — prints the scenario's trace, one event a line.
import CTestSupport
import Dispatch
import Glibc
import Logging
import RunLoopKit

let arguments = CommandLine.arguments
guard arguments.count == 3, let kind = BackendKind(rawValue: arguments[1]) else {
    trace("usage: MainLoopFixture BACKEND SCENARIO")
    exit(2)
}
// Sandbox scenarios: the system call is refused before the loop exists.
switch arguments[2] {
case "sandbox-epoll_pwait2":
    guard rlk_test_deny_syscall(rlk_test_sys_epoll_pwait2, EPERM) == 0 else { fatalError("seccomp: \(errno)") }
case "sandbox-io_uring_setup":
    guard rlk_test_deny_syscall(rlk_test_sys_io_uring_setup, EPERM) == 0 else { fatalError("seccomp: \(errno)") }
    do {
        _ = try Loop.current(backend: kind)
        trace("started")
    } catch let BackendError.unavailable(kind, .blockedBySandbox(error)) {
        trace("\(kind) unavailable: blocked by sandbox (\(error.operation), errno \(error.errno.rawValue))")
    } catch {
        trace("other error: \(error)")
    }
    exit(0)
default:
    break
}
let loop = try Loop.current(backend: kind)
guard loop === Loop.main else { fatalError("not the main loop") }

/// Prints one trace event, unbuffered (a crash must not lose earlier lines).
@Sendable func trace(_ event: String) {
    let line = event + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
}

/// A source that never fires, to keep a non-common mode alive.
let keepAlive = Loop.Source {}

switch arguments[2] {
case "modes":
    // Main-queue blocks run in the default and custom common modes, not in other modes.
    DispatchQueue.main.async { trace("block 1 in \(loop.currentMode!)") }
    loop.add(keepAlive, to: "private")
    trace("private: \(loop.run("private", timeout: .milliseconds(20)))")
    loop.addCommonMode("custom")
    trace("custom: \(loop.run("custom", timeout: .seconds(30), returnAfterSourceHandled: true))")
    DispatchQueue.main.async { trace("block 2 in \(loop.currentMode!)") }
    trace("default: \(loop.run(.default, timeout: .seconds(30), returnAfterSourceHandled: true))")

case "drain":
    // One drain runs the blocks queued before it, not those they queue.
    DispatchQueue.main.async {
        trace("first")
        DispatchQueue.main.async { trace("queued during the drain") }
    }
    DispatchQueue.main.async { trace("second") }
    trace("run: \(loop.run(timeout: .seconds(30), returnAfterSourceHandled: true))")
    trace("run: \(loop.run(timeout: .seconds(30), returnAfterSourceHandled: true))")

case "nested":
    // A run nested in a main-queue block cannot serve the queue: its common mode is empty.
    DispatchQueue.main.async {
        DispatchQueue.main.async { trace("later block") }
        trace("nested: \(loop.run(timeout: .seconds(30)))")
        loop.add(try! Loop.Timer(after: .milliseconds(1)) { _ in trace("nested timer") }, to: .default)
        trace("nested with timer: \(loop.run(timeout: .seconds(30)))")
    }
    trace("outer: \(loop.run(timeout: .seconds(30), returnAfterSourceHandled: true))")
    trace("outer: \(loop.run(timeout: .seconds(30), returnAfterSourceHandled: true))")

case "mainactor":
    // @MainActor tasks run on the main loop, with timers and main-queue blocks.
    Task { @MainActor in
        trace("task on main thread: \(Loop.currentIfCreated === loop)")
        await Task.yield()
        trace("task resumed")
        loop.stop()
    }
    trace("run: \(loop.run(timeout: .seconds(30)))")

case "async":
    // Loop.main.run { async body } returns the body's result once it finishes.
    let value = try loop.run {
        try await Task.sleep(for: .milliseconds(2))
        let timerFired = await withCheckedContinuation { continuation in
            loop.add(
                try! Loop.Timer(after: .milliseconds(1)) { _ in continuation.resume(returning: true) }, to: .default)
        }
        return timerFired ? 42 : 0
    }
    trace("value \(value)")

case "readme":
    // The README's example: a timer, a DispatchQueue.main block and a @MainActor task.
    let timer = try Loop.Timer(after: .milliseconds(5)) { _ in trace("timer") }
    loop.add(timer, to: .default)
    DispatchQueue.main.async { trace("main queue block") }
    Task { @MainActor in
        trace("main actor task")
        try await Task.sleep(for: .milliseconds(20))
        loop.stop()
    }
    trace("run: \(loop.run())")

#if GLib
case "glib-default-context":
    // Loop.main on the GLib backend serves GLib's default context (sources attached with a NULL
    // context, as g_idle_add and g_timeout_add do) beside DispatchQueue.main and @MainActor
    // tasks, all on the main thread. A chain: each step is caused by the one before.
    let mainThread = pthread_self()
    @Sendable func onMain() -> String {
        pthread_equal(pthread_self(), mainThread) != 0 ? "main thread" : "ANOTHER THREAD"
    }
    let keepAlive = try Loop.Timer(after: .seconds(60)) { _ in }
    loop.add(keepAlive, to: .default)
    addGLibIdle {
        trace("glib idle, \(onMain())")
        DispatchQueue.main.async {
            trace("main queue block, \(onMain())")
            addGLibTimeout(milliseconds: 1) {
                trace("glib timeout, \(onMain())")
                Task { @MainActor in
                    trace("main actor task, \(onMain())")
                    loop.stop()
                }
            }
        }
    }
    trace("run: \(loop.run(timeout: .seconds(30)))")
    keepAlive.invalidate()

case "glib-nested-main-queue":
    // A GLib callback runs a nested GMainLoop on the default context (a modal dialog): the main
    // queue and @MainActor work go on inside it (G5). A chain: the block posts the task, which
    // quits the nested loop; a guard quits it after seconds otherwise.
    let keepAlive = try Loop.Timer(after: .seconds(60)) { _ in }
    loop.add(keepAlive, to: .default)
    addGLibIdle {
        trace("glib idle")
        let guarded = runNestedDefaultLoop(guardMilliseconds: 5_000) { quit in
            DispatchQueue.main.async {
                trace("main queue block in the nested loop")
                Task { @MainActor in
                    trace("main actor task in the nested loop")
                    quit()
                }
            }
        }
        trace("nested loop returned, guard: \(guarded)")
        loop.stop()
    }
    trace("run: \(loop.run(timeout: .seconds(30)))")
    keepAlive.invalidate()

case "glib-invoke-ownership":
    try invokeOwnershipScenario(loop, trace: trace)

case "glib-invoke-ownership-reference":
    // GLib's own figures for the scenario above (run with a backend other than glib).
    invokeOwnershipReference(trace: trace)

#endif
case "sandbox-epoll_pwait2":
    // epoll_pwait2 answers EPERM: the loop waits with epoll_wait instead, timers still fire.
    loop.add(
        try Loop.Timer(after: .milliseconds(5)) { _ in
            trace("timer")
            loop.stop()
        }, to: .default)
    trace("run: \(loop.run(timeout: .seconds(30)))")

case "idle":
    // The first run with nothing queued makes one pass, then sleeps until its timeout: no pass
    // and no wakeup without a reason. (A thread descheduled past the timeout before it gets to
    // sleep polls instead, with no wakeup at all; the first run cannot be made again, so the
    // check is that any wakeup there was is the timeout's.)
    trace("run: \(loop.run(timeout: .milliseconds(20)))")
    let statistics = loop.statistics
    trace(
        "passes \(statistics.passes), spurious \(statistics.wakeups[.spurious]), every wakeup the timeout's: \(statistics.wakeups.total == statistics.wakeups[.timeout])"
    )

case "queued-first":
    // A block queued before the main loop ever ran is drained by its first run.
    DispatchQueue.main.async { trace("block") }
    DispatchQueue.main.async { trace("block 2") }
    trace("run: \(loop.run(timeout: .seconds(30), returnAfterSourceHandled: true))")

case "main-queue-refused":
    // The kernel refuses to watch the dispatch main queue (epoll_ctl fails from now on, on this
    // thread): the report is a record through Loop.logger, printed by TraceLogHandler.
    Loop.logger = Logger(label: "runloopkit", factory: { _ in TraceLogHandler() })
    loop.add(keepAlive, to: .default)
    guard rlk_test_deny_syscall(rlk_test_sys_epoll_ctl, EPERM) == 0 else { fatalError("seccomp: \(errno)") }
    trace("run: \(loop.run(timeout: .zero))")

case "main-actor-handlers":
    // Handlers written in main-actor code run on the main loop, checked (MainActorHandlers.swift).
    for line in try runMainActorHandlers(on: loop) { trace(line) }

case "main-actor-handlers-factory":
    // The same with the main actor's executor on the main loop (LoopExecutorFactory).
    LoopExecutorFactory.install()
    trace("installed: \(LoopExecutorFactory.isInstalled)")
    for line in try runMainActorHandlers(on: loop) { trace(line) }

case "main-actor-sleep":
    // Which of the main actor's sleeps reach the main loop's timers: counted by the loop.
    LoopExecutorFactory.install()
    try loop.run {
        let before = loop.statistics.timerFires
        try await Task.sleep(for: .milliseconds(2), tolerance: .milliseconds(1))
        trace("Task.sleep: \(loop.statistics.timerFires - before) loop timer(s)")
        let middle = loop.statistics.timerFires
        try await withTaskExecutorPreference(loop) {
            try await Task.sleep(for: .milliseconds(2), tolerance: .milliseconds(1))
        }
        trace("Task.sleep preferring Loop.main: \(loop.statistics.timerFires - middle) loop timer(s)")
        let last = loop.statistics.timerFires
        try await loop.sleep(for: .milliseconds(2), tolerance: .milliseconds(1))
        trace(
            "Loop.main.sleep: \(loop.statistics.timerFires - last) loop timer(s), on main: \(Loop.currentIfCreated === loop)"
        )
    }

case "async-stopped":
    // A stop before the body finishes cancels the body's task; the loop serves the task's
    // cleanup (a timer it awaits, after a second stop) until the task ends, then returns.
    let value = try loop.run {
        defer { trace("body ended") }
        trace("body started")
        loop.add(try! Loop.Timer(after: .milliseconds(1)) { _ in loop.stop() }, to: .default)
        do {
            try await Task.sleep(for: .seconds(60))
            trace("body not cancelled")
        } catch {
            trace("body cancelled: \(error is CancellationError)")
        }
        loop.stop()
        let served = await withCheckedContinuation { continuation in
            loop.add(
                try! Loop.Timer(after: .milliseconds(1)) { _ in continuation.resume(returning: true) }, to: .default)
        }
        trace("cleanup served: \(served)")
        return 7
    }
    trace("value \(value)")

case "async-stopped-throws":
    // A body that lets the cancellation propagate: the run throws its CancellationError.
    do {
        _ = try loop.run {
            defer { trace("body ended") }
            loop.add(try! Loop.Timer(after: .milliseconds(1)) { _ in loop.stop() }, to: .default)
            try await Task.sleep(for: .seconds(60))
            return 1
        }
        trace("returned")
    } catch {
        trace("threw CancellationError: \(error is CancellationError)")
    }

case "async-throws":
    // A body that throws: the run throws the same error.
    struct Boom: Error {}
    do {
        _ = try loop.run { () async throws -> Int in
            defer { trace("body ended") }
            try await Task.sleep(for: .milliseconds(1))
            throw Boom()
        }
        trace("returned")
    } catch {
        trace("threw Boom: \(error is Boom)")
    }

default:
    trace("unknown scenario \(arguments[2])")
    exit(2)
}

/// Prints each record RunLoopKit logs as three trace lines: level and message, metadata (sorted
/// by key, separated by semicolons), and the attached error.
struct TraceLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        trace("record \(event.level) \(event.message)")
        trace(
            "metadata "
                + (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                    separator: ";"))
        trace("error \(event.error.map { "\($0)" } ?? "none")")
    }
}
