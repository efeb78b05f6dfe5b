import Glibc
import RunLoopKit
import TestSupport
import Testing

/// A signal-triggered graceful shutdown, in a process of its own (`ServiceLifecycleFixture`):
/// a `ServiceGroup` configured with `gracefulShutdownSignals: [.sigterm]` runs a
/// `LoopThreadService` while a thread keeps posting blocks; once the child says it serves, the
/// test sends SIGTERM. The group must shut the service down gracefully: every block accepted
/// before the shutdown runs, later ones are refused, the group's run returns and the program
/// exits with status 0.
@Suite("LoopThreadService: graceful shutdown on SIGTERM in a child process")
struct SignalShutdownTests {
    @Test(
        "SIGTERM ends the service's loop after the blocks accepted before it; the program exits 0",
        arguments: serviceBackends)
    func sigtermShutsDownGracefully(_ backend: BackendKind) async throws {
        let child = try ServingChild("ServiceLifecycleFixture", [backend.rawValue], awaiting: "serving")
        // Each wait below has its own deadline (the child is killed after it).
        let (serving, ended) = try await offThePool {
            let serving = child.waitForLine()
            if serving { child.send(SIGTERM) }
            return (serving, child.finish())
        }
        #expect(serving, "the child never said it serves: \(ended.lines), \(ended.errors)")
        #expect(!ended.killed, "the child did not exit after SIGTERM: \(ended.lines), \(ended.errors)")
        #expect(
            ended.ending == ChildProcess.Ending(status: 0, signalled: false),
            "\(ended.ending): \(ended.lines), \(ended.errors)")
        try #require(ended.lines.count == 2, "\(ended.lines), \(ended.errors)")
        #expect(ended.lines[0] == "serving")
        // "posted N ran N late-refused": every accepted block ran, and a block posted after the
        // group's run returned was refused.
        let words = ended.lines[1].split(separator: " ")
        try #require(words.count == 5 && words[0] == "posted" && words[2] == "ran", "\(ended.lines[1])")
        #expect(words[1] == words[3], "\(ended.lines[1])")
        #expect((Int(words[1]) ?? 0) > 0, "\(ended.lines[1])")
        #expect(words[4] == "late-refused")
    }
}
