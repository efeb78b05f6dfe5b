import Glibc
import InMemoryLogging
import Logging
import RunLoopKit
import TestSupport
import Testing

/// M6 through `Loop.logger`: `run(.common)` is reported once per process, so each case runs in
/// a child process of its own (an exit test) with an in-memory logger installed.
@Suite("Logging: running .common")
struct CommonModeLoggingTests {
    @Test("running .common: one warning record per process, naming the loop and the mode", arguments: backends)
    func commonModeRunRecord(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let handler = InMemoryLogHandler()
            Loop.logger = Logger(label: "runloopkit", factory: { _ in handler })
            let loop = try Loop.current(backend: backend)
            let results = [loop.run(.common), loop.run(.common)]
            let expected = InMemoryLogHandler.Entry(
                level: .warning,
                message: "Loop.run(.common) is a usage error: .common is a set of modes, not a mode; run one of them",
                metadata: [
                    "report": "common-mode-run", "loop": .string(loop.description),
                    "mode": .string(Loop.Mode.common.name),
                ])
            let entries = handler.entries
            precondition(
                entries == [expected] && results == [.finished, .finished],
                "FAILED: results \(results), records \(entries)")
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("FAILED"), "\(errors)")
        // The report went to the replaced logger only, not to standard error as well.
        #expect(!errors.contains("RunLoopKit:"), "\(errors)")
    }
}
