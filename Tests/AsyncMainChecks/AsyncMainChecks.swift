// The body the async-main fixtures share: it awaits the main loop's kinds of work and checks,
// after each await, that it is back on the main thread, on the main loop, which is running.
// LoopExecutorFactory exists with Swift 6.3 and later only (see its source file).
#if compiler(>=6.3)
import CTestSupport
import Dispatch
import Glibc
import RunLoopKit
import TestSupport

/// Why a fixture's run failed; `main` throws it to show how Swift reports a thrown error.
public enum AsyncMainFixtureError: Error {
    case requested
}

/// Runs the checks for `arguments` (`BACKEND [throw]`), one output line per check.
///
/// Takes the main thread's loop with `BACKEND` (creating it unless the program did, with that
/// backend), then reports whether the main actor's executor is the main loop. When it is not (a program built
/// without the flag that installs the factory), it stops there: nothing would run the loop.
/// With `throw`, it throws ``AsyncMainFixtureError/requested`` after the checks.
@MainActor
public func runAsyncMainChecks(_ arguments: [String]) async throws {
    guard arguments.count >= 2, arguments.count <= 3, let kind = BackendKind(rawValue: arguments[1]),
        arguments.count == 2 || arguments[2] == "throw"
    else {
        trace("usage: \(arguments.first ?? "fixture") BACKEND [throw]")
        exit(2)
    }
    let loop = try Loop.current(backend: kind)
    trace("the main loop uses the requested backend: \(loop === Loop.main && loop.backend == kind)")
    trace("main executor is the main loop: \(LoopExecutorFactory.isInstalled)")
    guard LoopExecutorFactory.isInstalled else { return }
    atexit { trace("exit handlers ran") }
    let watchdog = startWatchdog()

    // (i) A timer of the main loop.
    await withCheckedContinuation { continuation in
        loop.add(try! Loop.Timer(after: .milliseconds(1)) { _ in continuation.resume() }, to: .default)
    }
    check("after a timer")

    // (ii) A block on the dispatch main queue, which the main loop drains.
    await withCheckedContinuation { continuation in
        DispatchQueue.main.async { continuation.resume() }
    }
    check("after a DispatchQueue.main block")

    // (iii) A descriptor source: a pipe another thread writes.
    let pipe = try TestSupport.Pipe()
    let (bytes, received) = AsyncStream.makeStream(of: UInt8.self)
    let source = try Loop.Source(fileDescriptor: pipe.readEnd, interest: .readable) { _ in
        var byte: UInt8 = 0
        if read(pipe.readEnd, &byte, 1) == 1 { received.yield(byte) }
    }
    loop.add(source, to: .default)
    DispatchQueue.global().async { pipe.fill(1) }
    var iterator = bytes.makeAsyncIterator()
    let byte = await iterator.next()
    source.invalidate()
    pipe.close()
    check("after a descriptor source read \(byte.map(String.init) ?? "nothing")")

    // (iv) A hop back from the default executor, and onto the main actor from another thread.
    let ranOffMain = await offTheMainThread()
    trace("nonisolated code ran off the main thread: \(ranOffMain)")
    check("after nonisolated code")
    let hopped = await Task.detached {
        await MainActor.run { onMainThread() && Loop.current === Loop.main && Loop.main.currentMode != nil }
    }.value
    trace("MainActor.run from a detached task ran on the main loop: \(hopped)")
    check("after the detached task")

    // Task.sleep: timed by the default executor, resumed on the main loop.
    try await Task.sleep(for: .milliseconds(1))
    check("after Task.sleep")

    watchdog.open()
    if arguments.count == 3 {
        trace("throwing")
        throw AsyncMainFixtureError.requested
    }
    trace("returning")
}

/// Runs on the default executor (not the main actor): reports whether that was another thread.
@concurrent
private func offTheMainThread() async -> Bool {
    !onMainThread()
}

/// Prints whether the caller runs on the main thread, under the main loop, while it runs.
private func check(_ label: String) {
    trace(
        "\(label): main thread \(onMainThread()), Loop.main \(Loop.current === Loop.main), running \(Loop.main.currentMode != nil)"
    )
}

/// The kernel's answer, independent of RunLoopKit: the main thread's id is the process id.
private func onMainThread() -> Bool { rlk_test_gettid() == getpid() }

/// Ends the program with status 3 if the checks have not finished within the generous
/// deadline (an await that never resumes would otherwise hang the test).
private func startWatchdog() -> Latch {
    let finished = Latch()
    _ = try! TestThread {
        guard !finished.wait(for: generousDeadline) else { return }
        trace("timed out")
        exit(3)
    }
    return finished
}

/// Prints one line, unbuffered (a crash must not lose earlier lines).
@Sendable private func trace(_ line: String) {
    let text = line + "\n"
    _ = text.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
}
#endif
