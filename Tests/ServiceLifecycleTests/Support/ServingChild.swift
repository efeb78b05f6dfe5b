import Glibc
import RunLoopKit
import TestSupport

/// A fixture program (built next to the test bundle) run as a child: the test waits for a line
/// it prints, signals it, and reads how it ended.
final class ServingChild: Sendable {
    private let child: ChildProcess
    private let output = Lock<String>("")
    private let errors = Lock<String>("")
    /// Opened when the awaited line arrives, or the output ends without it.
    private let lineOrEnd = Latch()
    /// Whether the awaited line arrived.
    private let lineSeen = Latch()
    private let outputEnded = Latch()
    private let errorsEnded = Latch()

    /// Starts `name ARGUMENTS…` (see ``ChildProcess``), reading both streams as they come;
    /// ``waitForLine`` waits for a line equal to `line`.
    init(_ name: String, _ arguments: [String], awaiting line: String) throws {
        let child = try ChildProcess(name, arguments)
        self.child = child
        let (output, errors, outputEnded, errorsEnded) = (self.output, self.errors, self.outputEnded, self.errorsEnded)
        let (lineOrEnd, lineSeen) = (self.lineOrEnd, self.lineSeen)
        try child.alongside {
            while let data = readSome(child.output), !data.isEmpty {
                let text = output.withLock { text in
                    text += String(decoding: data, as: UTF8.self)
                    return text
                }
                if text.split(separator: "\n").contains(where: { $0 == line }) {
                    lineSeen.open()
                    lineOrEnd.open()
                }
            }
            lineOrEnd.open()
            outputEnded.open()
        }
        try child.alongside {
            let data = readToEnd(child.errors)
            errors.withLock { $0 = String(decoding: data, as: UTF8.self) }
            errorsEnded.open()
        }
    }

    /// Waits (blocking the calling thread) for the awaited line; false if the output ended or
    /// time ran out first.
    func waitForLine() -> Bool {
        lineOrEnd.wait() && lineSeen.isOpen
    }

    /// Sends `signal` to the child.
    func send(_ signal: Int32) { child.send(signal) }

    /// Waits (blocking the calling thread) until the child exits, killing it after `limit`;
    /// returns its output lines, standard error, how it ended, and whether it was killed.
    func finish(
        within limit: Duration = generousDeadline
    ) -> (lines: [String], errors: String, ending: ChildProcess.Ending, killed: Bool) {
        let killed = !outputEnded.wait(for: limit)
        if killed { child.send(SIGKILL) }
        let ending = child.wait()
        errorsEnded.wait()
        let lines = output.withLock { $0 }.split(separator: "\n").map(String.init)
        return (lines, errors.withLock { $0 }, ending, killed)
    }
}
