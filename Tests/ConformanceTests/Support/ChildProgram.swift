import Foundation
import RunLoopKit
import TestSupport

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

    /// Runs `name ARGUMENTS…` with Swift's crash backtracer off (its report is long and slow),
    /// killing it if it has not ended within `limit`.
    static func run(
        _ name: String, _ arguments: [String], limit: Duration = generousDeadline * 2
    ) throws
        -> ChildProgram
    {
        let bundle = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let process = Process()
        process.executableURL = bundle.deletingLastPathComponent().appendingPathComponent(name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        let (output, errors) = (Foundation.Pipe(), Foundation.Pipe())
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let killed = Latch()
        let exited = Latch()
        try spawnThread {
            guard !exited.wait(for: limit) else { return }
            killed.open()
            kill(process.processIdentifier, SIGKILL)
        }
        // Both streams are read at once, so that neither can fill up and block the program.
        let errorText = Lock<[UInt8]>([])
        let errorsRead = Latch()
        try spawnThread {
            let data = readToEnd(errors.fileHandleForReading.fileDescriptor)
            errorText.withLock { $0 = data }
            errorsRead.open()
        }
        let outputData = readToEnd(output.fileHandleForReading.fileDescriptor)
        process.waitUntilExit()
        exited.open()
        errorsRead.wait(for: limit)
        return ChildProgram(
            output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorText.withLock { $0 }, as: UTF8.self),
            status: process.terminationStatus,
            crashed: process.terminationReason == .uncaughtSignal,
            timedOut: killed.isOpen
        )
    }
}
