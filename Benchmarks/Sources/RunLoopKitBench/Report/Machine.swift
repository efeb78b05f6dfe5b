import Foundation
import RunLoopKit

/// What the numbers were measured on, printed with every report.
struct Machine: Codable {
    var cpus: Int
    var cpuModel: String
    var kernel: String
    var backends: [String]
    var openFilesLimit: UInt64

    static var current: Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last!.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return Machine(
            cpus: ProcessInfo.processInfo.activeProcessorCount,
            cpuModel: model,
            kernel: kernel,
            backends: BackendKind.allCases.map(\.rawValue),
            openFilesLimit: Limits.raiseOpenFiles()
        )
    }

    var summary: String { "\(cpus) CPU \(cpuModel), Linux \(kernel)" }
}

enum JSONReport {
    struct Document: Codable {
        var machine: Machine
        var seconds: Double
        var seed: UInt64
        var unit: String
        var notes: [String]
        var results: [Measurement]
    }

    static func render(_ results: Results, machine: Machine, settings: Settings, seconds: Double) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let document = Document(
            machine: machine, seconds: seconds, seed: settings.seed, unit: "latency fields in nanoseconds",
            notes: results.notes, results: results.all)
        return String(decoding: try encoder.encode(document), as: UTF8.self)
    }
}
