import Foundation
import RunLoopKit

/// The targets section being written: the run's results, which subjects the targets hold, and
/// how a line is marked. The areas are in the `TargetSheet+…` files.
struct TargetSheet {
    let results: Results
    private(set) var lines = ["== targets"]
    /// RunLoopKit's backends held to the targets (all but the GLib backend), measured here.
    let backends: [String]
    /// The GLib backend and the embedded loops, measured here: shown against GLib alone.
    let glibLoops: [String]

    init(_ results: Results) {
        self.results = results
        let measured = Set(results.all.filter { $0.latency != nil || !$0.metrics.isEmpty }.map(\.subject))
        var backends: [String] = []
        var glibLoops: [String] = []
        for subject in Subject.all where measured.contains(subject.description) {
            switch subject {
            case let .kit(kind) where kind.name != "glib", let .main(kind) where kind.name != "glib":
                backends.append(subject.description)
            case .kit, .main, .embedded: glibLoops.append(subject.description)
            case .coreFoundation, .nio, .glib, .floor: continue
            }
        }
        self.backends = backends
        self.glibLoops = glibLoops
    }

    /// Whether `subject` is a loop on the GLib backend (on a thread or as the main loop), which
    /// GLib's own loop is the reference for, as opposed to a loop embedded in GLib.
    func isGLibBackend(_ subject: String) -> Bool {
        switch Subject(name: subject) {
        case let .kit(kind)?, let .main(kind)?: kind.name == "glib"
        default: false
        }
    }

    // MARK: lines

    /// One target line: met (true), MISS (false), or – (nil: not measured here).
    mutating func verdict(_ ok: Bool?, _ text: String) {
        lines.append("  [\(ok.map { $0 ? "met " : "MISS" } ?? " –  ")] \(text)")
    }

    /// A figure shown without a target.
    mutating func info(_ text: String) {
        lines.append("  [info] \(text)")
    }

    /// An area's heading, for an area that compares subjects across scenarios.
    mutating func section(_ name: String, _ text: String) {
        lines.append("\(name) — \(text)")
    }

    /// An area's heading: the targets it checks. Returns false (after a `–` line) when the
    /// run did not include the scenario.
    mutating func heading(_ scenario: String, _ text: String) -> Bool {
        lines.append("\(scenario) — \(text)")
        guard results.all.contains(where: { $0.scenario == scenario }) else {
            verdict(nil, "\(scenario): not measured in this run (--scenarios \(scenario))")
            return false
        }
        return true
    }

    // MARK: figures

    func latency(_ scenario: String, _ variant: String, _ subject: String) -> LatencySummary? {
        results.find(scenario, variant, subject)?.latency
    }

    func metric(_ scenario: String, _ variant: String, _ subject: String, _ name: String) -> Double? {
        results.find(scenario, variant, subject)?.metric(name)
    }

    /// The row a target compares `backend` with for the reference `reference` (`nio`,
    /// `floor`): for a main subject, the reference measured beside it in its child, in the
    /// same rounds (`MainSubject`); otherwise, or when the child has none, this run's. The
    /// label says which (`nio's` or `nio's beside it`).
    func reference(
        _ scenario: String, _ variant: String, _ reference: String, for backend: String
    ) -> (row: Measurement, label: String)? {
        if let beside = results.find(scenario, variant, MainSubject.reference(reference, besideMain: backend)) {
            return (beside, "\(reference)'s beside it")
        }
        return results.find(scenario, variant, reference).map { ($0, "\(reference)'s") }
    }

    static func µs(_ nanoseconds: UInt64) -> String { Table.micros(nanoseconds) + " µs" }

    static func times(_ value: Double) -> String { String(format: "%.2f×", value) }

    static func ratio(_ a: UInt64, _ b: UInt64) -> String { times(Double(a) / Double(max(b, 1))) }

    static func millions(_ rate: Double) -> String { String(format: "%.2f M", rate / 1e6) }

    static func lost(_ count: Double) -> String {
        count == 0 ? "none lost" : String(format: "%.0f lost", count)
    }
}
