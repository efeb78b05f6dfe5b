import Foundation
import RunLoopKit
import TestSupport

/// Runs `MainLoopFixture BACKEND SCENARIO` (built next to the test bundle) and returns the
/// lines it printed; the fixture's own main thread runs the main loop.
func runMainLoopFixture(_ backend: BackendKind, _ scenario: String) throws -> [String] {
    let bundle = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    let process = Process()
    process.executableURL = bundle.deletingLastPathComponent().appendingPathComponent("MainLoopFixture")
    process.arguments = [backend.rawValue, scenario]
    let output = Foundation.Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    guard process.terminationStatus == 0 else { return lines + ["exit status \(process.terminationStatus)"] }
    return lines
}
