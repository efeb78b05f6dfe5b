import Foundation

/// The terminal report: one table per scenario variant.
///
/// Latency tables show HdrHistogram percentiles in microseconds, plus p50 against the floor
/// and against CoreFoundation and NIO; metric tables show each metric as a column.
enum Table {
    static func render(_ results: Results) -> String {
        var out = ""
        for group in results.groups {
            out += "\n== \(group.scenario) / \(group.variant)"
            if let note = group.rows.compactMap(\.note).first(where: { !$0.hasPrefix("not measured") }) {
                out += "  (\(note))"
            }
            out += "\n"
            let latencyRows = group.rows.filter { $0.latency != nil }
            if !latencyRows.isEmpty {
                out += latencyTable(
                    latencyRows, floor: floorP50(group.rows), cf: group.rows.first { $0.subject == "cf" }?.latency?.p50,
                    nio: group.rows.first { $0.subject == "nio" }?.latency?.p50)
            }
            let metricRows = group.rows.filter { $0.latency == nil && !$0.metrics.isEmpty }
            if !metricRows.isEmpty { out += metricTable(metricRows) }
            for row in group.rows where row.latency == nil && row.metrics.isEmpty {
                out += "  \(row.subject): \(row.note ?? "")\n"
            }
        }
        return out
    }

    /// The best (lowest) p50 among the floor subjects of a group, this process's: a floor a
    /// main subject's child measured beside it (`floor@epoll-main`) is another process's, at
    /// another time.
    static func floorP50(_ rows: [Measurement]) -> UInt64? {
        rows.filter { $0.subject.hasPrefix("floor") && !$0.subject.contains("@") }.compactMap(\.latency?.p50).min()
    }

    private static func latencyTable(_ rows: [Measurement], floor: UInt64?, cf: UInt64?, nio: UInt64?) -> String {
        let header = [
            "subject", "n", "min µs", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs", "early", "p50/floor",
            "p50/cf", "p50/nio",
        ]
        let body: [[String]] = rows.map { row in
            let latency = row.latency!
            func ratio(_ reference: UInt64?) -> String {
                guard let reference, reference > 0 else { return "–" }
                return String(format: "%.2f×", Double(latency.p50) / Double(reference))
            }
            return [
                row.subject, "\(latency.count)", micros(latency.min), micros(latency.p50), micros(latency.p90),
                micros(latency.p99),
                micros(latency.p999), micros(latency.max), "\(latency.early)", ratio(floor), ratio(cf), ratio(nio),
            ]
        }
        return format([header] + body)
    }

    private static func metricTable(_ rows: [Measurement]) -> String {
        var names: [String] = []
        for row in rows { for metric in row.metrics where !names.contains(metric.name) { names.append(metric.name) } }
        let body: [[String]] = rows.map { row in
            [row.subject] + names.map { name in row.metric(name).map(number) ?? "–" }
        }
        return format([["subject"] + names] + body)
    }

    static func micros(_ nanoseconds: UInt64) -> String {
        String(format: nanoseconds < 10_000 ? "%.2f" : "%.1f", Double(nanoseconds) / 1e3)
    }

    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e7 { return String(format: "%.0f", value) }
        if abs(value) >= 1e6 { return String(format: "%.2fM", value / 1e6) }
        return String(format: abs(value) < 10 ? "%.2f" : "%.1f", value)
    }

    /// Right-aligned columns except the first.
    private static func format(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max()! }
        return rows.enumerated().map { index, row in
            let line = row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + pad : pad + cell
            }.joined(separator: "  ")
            return "  " + line + (index == 0 ? "\n  " + String(repeating: "-", count: line.count) : "")
        }.joined(separator: "\n") + "\n"
    }
}
