/// What a program did, step by step: each step's events (callouts, run results, membership
/// callbacks, each stamped with the virtual time), then a line describing the observable state.
struct Trace: Sendable, Equatable {
    var steps: [[String]] = []

    /// The first step where `actual` differs from `self` (the prediction), as a report.
    func divergence(from actual: Trace, program: Program) -> String? {
        for index in 0..<max(steps.count, actual.steps.count) {
            let expected = index < steps.count ? steps[index] : []
            let got = index < actual.steps.count ? actual.steps[index] : []
            guard expected != got else { continue }
            let line =
                (0..<min(expected.count, got.count)).first { expected[$0] != got[$0] } ?? min(expected.count, got.count)
            let step = index < program.steps.count ? "\(program.steps[index])" : "after the last step"
            return """
                Core differs from the model at step \(index) (\(step)), event \(line):
                model predicts:
                \(Trace.render(expected, marking: line))
                Core did:
                \(Trace.render(got, marking: line))
                """
        }
        return nil
    }

    private static func render(_ events: [String], marking line: Int) -> String {
        if events.isEmpty { return "    (nothing)" }
        return events.enumerated().map { "\($0.offset == line ? "  > " : "    ")\($0.element)" }.joined(separator: "\n")
    }
}

/// Shared formatting, so that the model and the harness print the same facts the same way.
enum TraceFormat {
    /// A virtual-clock offset: whole milliseconds as `12ms`, anything finer in nanoseconds.
    static func time(nanoseconds: Int64) -> String {
        nanoseconds % 1_000_000 == 0 ? "\(nanoseconds / 1_000_000)ms" : "\(nanoseconds)ns"
    }

    /// The inverse of `time(nanoseconds:)`.
    static func nanoseconds(parsing text: Substring) -> Int64? {
        if text.hasSuffix("ns") { return Int64(text.dropLast(2)) }
        if text.hasSuffix("ms") { return Int64(text.dropLast(2)).map { $0 * 1_000_000 } }
        return nil
    }

    /// A sleep that ends by itself (a timer, a tolerance window or the run's deadline).
    static func sleep(until end: Int64) -> String { "sleep until \(time(nanoseconds: end))" }

    /// A timer's detail in the state line: its next instant, and its tolerance when it has one.
    static func timerDetail(next: Int64, tolerance: Int64) -> String {
        "next \(time(nanoseconds: next))" + (tolerance == 0 ? "" : " tolerance \(time(nanoseconds: tolerance))")
    }

    /// One item as the state line shows it.
    struct ItemState {
        var name: String
        var valid: Bool
        /// `signalled` for a source, the next fire instant (and tolerance) for a timer.
        var detail: String?
        /// The modes `contains` reports, `common` included.
        var modes: [ModeName]
    }

    /// Version-0 source `index`'s state: `signalled` while it is valid and signalled.
    static func source(_ index: Int, valid: Bool, signalled: Bool, modes: [ModeName]) -> ItemState {
        ItemState(name: "s\(index)", valid: valid, detail: valid && signalled ? "signalled" : nil, modes: modes)
    }

    static func state(commonModes: [ModeName], items: [ItemState]) -> String {
        let described = items.map { item in
            var text = item.name
            if !item.valid { text += " invalid" }
            if let detail = item.detail { text += " " + detail }
            if !item.modes.isEmpty {
                text += " in [" + item.modes.sorted().map(\.description).joined(separator: ",") + "]"
            }
            return text
        }
        return "state: common [\(commonModes.sorted().map(\.description).joined(separator: ","))]; "
            + described.joined(separator: "; ")
    }
}
