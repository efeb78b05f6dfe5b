import Glibc
import RunLoopKit
import TestSupport
import Testing

/// Loop.main attached to GLib's default context in a program whose main thread runs
/// g_main_loop_run (`GLibMainLoopFixture`, a child process: the test runner's main thread is
/// not the tests'): DispatchQueue.main, a @MainActor task, a RunLoopKit timer and pipe source,
/// blocks from other threads and GLib's own timeout and idle all run on the main thread, once.
@Suite("RunLoopKitGLib: Loop.main under GLib's main loop")
struct MainLoopTests {
    @Test("DispatchQueue.main, @MainActor, timers, sources, blocks and GLib's sources all run on the main thread, once")
    func everythingOnTheMainThread() async throws {
        try await offThePool {
            let (lines, ending, errors) = try runFixture("GLibMainLoopFixture")
            var expected = [
                "dispatch-main", "main-actor-task", "loop-timer", "pipe", "glib-timeout", "glib-idle",
            ]
            for thread in 0..<3 { expected += (0..<50).map { "block-\(thread)-\($0)" } }
            let events = lines.filter { $0.hasPrefix("event ") }
            #expect(
                ending == ChildProcess.Ending(status: 0, signalled: false),
                "the fixture's output: \(lines.suffix(5)); its standard error: \(errors)")
            #expect(events.sorted() == expected.map { "event \($0) main=true" }.sorted())
            #expect(lines.last == "done")
        }
    }
}

/// The fixture's status did not come within ``generousDeadline``.
struct FixtureTimedOut: Error {}

/// Runs the fixture program `name` (built next to the test bundle) to its end; its output lines,
/// how it ended and its standard error. Killed, and an error thrown, after ``generousDeadline``.
func runFixture(_ name: String) throws -> (lines: [String], ending: ChildProcess.Ending, errors: String) {
    let child = try ChildProcess(name)
    let ended = Latch()
    let text = Lock("")
    let errorsEnded = Latch()
    let errors = Lock("")
    try child.alongside {
        let data = readToEnd(child.output)
        text.withLock { $0 = String(decoding: data, as: UTF8.self) }
        ended.open()
    }
    // Read as well, so that a fixture writing much there cannot block on a full pipe.
    try child.alongside {
        let data = readToEnd(child.errors)
        errors.withLock { $0 = String(decoding: data, as: UTF8.self) }
        errorsEnded.open()
    }
    guard ended.wait() else {
        child.send(SIGKILL)
        _ = child.wait()
        Issue.record("\(name) did not end within \(generousDeadline)")
        throw FixtureTimedOut()
    }
    let ending = child.wait()
    errorsEnded.wait()
    return (text.withLock { $0 }.split(separator: "\n").map(String.init), ending, errors.withLock { $0 })
}
