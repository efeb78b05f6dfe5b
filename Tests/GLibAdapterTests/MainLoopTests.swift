import Foundation
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
            let (lines, status) = try runFixture("GLibMainLoopFixture")
            var expected = [
                "dispatch-main", "main-actor-task", "loop-timer", "pipe", "glib-timeout", "glib-idle",
            ]
            for thread in 0..<3 { expected += (0..<50).map { "block-\(thread)-\($0)" } }
            let events = lines.filter { $0.hasPrefix("event ") }
            #expect(status == 0, "the fixture's output: \(lines.suffix(5))")
            #expect(events.sorted() == expected.map { "event \($0) main=true" }.sorted())
            #expect(lines.last == "done")
        }
    }
}

/// The fixture's status did not come within ``generousDeadline``.
struct FixtureTimedOut: Error {}

/// Runs the fixture program `name` (built next to the test bundle) to its end; its output lines
/// and exit status. Killed, and an error thrown, after ``generousDeadline``.
func runFixture(_ name: String) throws -> (lines: [String], status: Int32) {
    let bundle = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    let process = Process()
    process.executableURL = bundle.deletingLastPathComponent().appendingPathComponent(name)
    process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
    let output = Foundation.Pipe()
    process.standardOutput = output
    let ended = Latch()
    let text = Lock("")
    try process.run()
    try spawnThread {
        let data = readToEnd(output.fileHandleForReading.fileDescriptor)
        text.withLock { $0 = String(decoding: data, as: UTF8.self) }
        ended.open()
    }
    guard ended.wait() else {
        process.terminate()
        Issue.record("\(name) did not end within \(generousDeadline)")
        throw FixtureTimedOut()
    }
    process.waitUntilExit()
    return (text.withLock { $0 }.split(separator: "\n").map(String.init), process.terminationStatus)
}
