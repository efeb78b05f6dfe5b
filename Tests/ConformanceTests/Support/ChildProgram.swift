import Glibc
import RunLoopKit
import TestSupport
import Testing

/// One run of a fixture program built next to the test bundle: what it printed and how it
/// ended.
struct ChildProgram: Sendable {
    /// Standard output.
    let output: String
    let errors: String
    /// The exit status, or the signal that ended it (see ``crashed``).
    let status: Int32
    /// Whether a signal ended it (a trap, or the kill after its time limit).
    let crashed: Bool
    /// Whether it was killed for outliving its time limit.
    let timedOut: Bool

    /// Standard output, a line per element.
    var lines: [String] { output.split(separator: "\n").map(String.init) }

    /// Runs `name ARGUMENTS…` (see ``ChildProcess``), killing it if it has not ended within
    /// `limit`; waits for it off the cooperative pool.
    static func run(
        _ name: String, _ arguments: [String], limit: Duration = generousDeadline * 2
    ) async throws -> ChildProgram {
        try await offThePool {
            let child = try ChildProcess(name, arguments)
            let killed = Latch()
            let exited = Latch()
            try child.alongside {
                guard !exited.wait(for: limit) else { return }
                killed.open()
                child.send(SIGKILL)
            }
            // Both streams are read at once, so that neither can fill up and block the program.
            let errorText = Lock<[UInt8]>([])
            let errorsRead = Latch()
            try child.alongside {
                let data = readToEnd(child.errors)
                errorText.withLock { $0 = data }
                errorsRead.open()
            }
            let outputData = readToEnd(child.output)
            let ending = child.wait()
            exited.open()
            errorsRead.wait(for: limit)
            return ChildProgram(
                output: String(decoding: outputData, as: UTF8.self),
                errors: String(decoding: errorText.withLock { $0 }, as: UTF8.self),
                status: ending.status,
                crashed: ending.signalled,
                timedOut: killed.isOpen
            )
        }
    }
}

/// Runs the fixture program `name ARGUMENTS…` (``ChildProgram/run(_:_:limit:)``) and expects it
/// to print `lines` and exit normally.
func expectCleanRun(
    _ name: String, _ arguments: [String], limit: Duration = generousDeadline * 2, printed lines: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let run = try await ChildProgram.run(name, arguments, limit: limit)
    #expect(run.lines == lines, sourceLocation: sourceLocation)
    #expect(!run.crashed && run.status == 0, "\(run.errors)", sourceLocation: sourceLocation)
}
