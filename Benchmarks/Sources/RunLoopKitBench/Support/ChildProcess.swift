import Foundation
import Glibc

/// The harness run again as a child process, for a measurement that needs a process of its
/// own: the main-queue wake and the main subjects (a main loop needs the main thread; see
/// `MainSubject`) and the idle cost (every thread of the process counted, and only the
/// subject's threads in it).
enum ChildProcess {
    /// Runs this executable with `arguments` and returns its standard output, line by line.
    /// Throws when the child prints `error …` (its reason) or exits with a non-zero status.
    static func run(_ arguments: [String]) throws -> [Substring] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try executablePath())
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        if let failure = lines.first(where: { $0.hasPrefix("error ") }) {
            throw Failure(description: String(failure.dropFirst("error ".count)))
        }
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(arguments.first ?? "child") exited with status \(process.terminationStatus)")
        }
        return lines
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private static func executablePath() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw Failure(description: "readlink /proc/self/exe: errno \(errno)") }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
