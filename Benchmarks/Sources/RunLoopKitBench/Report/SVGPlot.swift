import Foundation
import Histogram

/// HdrHistogram-style percentile plots, one panel per latency scenario variant, one line per
/// subject: x is the percentile on a log scale of 1/(1 − p) (so 90%, 99%, 99.9% are evenly
/// spaced, and the tail gets the room it deserves), y is the latency in microseconds (log
/// scale, since subjects differ by orders of magnitude).
enum SVGPlot {
    static let palette = [
        "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
    ]

    static func render(_ results: Results, title: String) -> String {
        let panels = results.groups.filter { $0.rows.contains { $0.histogram != nil } }
        let (width, panelHeight, left, right, top, bottom) = (760.0, 300.0, 70.0, 170.0, 40.0, 40.0)
        let height = Double(panels.count) * (panelHeight + top + bottom) + 40
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="22" font-size="15" font-weight="bold">\(escape(title))</text>

            """
        let maxX = 5.0 // up to the 99.999th percentile
        for (index, panel) in panels.enumerated() {
            let originY = 40 + Double(index) * (panelHeight + top + bottom) + top
            let plotWidth = width - left - right
            let lines = panel.rows.compactMap { row in row.histogram.map { (row.subject, curve($0)) } }
            let values = lines.flatMap { $0.1.map(\.1) }
            let lowest = log10(max(values.min() ?? 1, 0.1)).rounded(.down)
            let highest = max(log10(max(values.max() ?? 10, 0.1)).rounded(.up), lowest + 1)
            func x(_ level: Double) -> Double { left + min(level, maxX) / maxX * plotWidth }
            func y(_ micros: Double) -> Double {
                originY + panelHeight - (log10(max(micros, 0.1)) - lowest) / (highest - lowest) * panelHeight
            }
            svg +=
                "<text x=\"\(left)\" y=\"\(originY - 10)\" font-size=\"13\" font-weight=\"bold\">\(escape(panel.scenario)) / \(escape(panel.variant)) — latency by percentile</text>\n"
            svg +=
                "<rect x=\"\(left)\" y=\"\(originY)\" width=\"\(plotWidth)\" height=\"\(panelHeight)\" fill=\"none\" stroke=\"#888\"/>\n"
            for decade in stride(from: lowest, through: highest, by: 1) {
                let micros = pow(10, decade)
                let label = micros >= 1 ? String(format: "%.0f µs", micros) : String(format: "%.1f µs", micros)
                svg +=
                    "<line x1=\"\(left)\" x2=\"\(left + plotWidth)\" y1=\"\(y(micros))\" y2=\"\(y(micros))\" stroke=\"#ddd\"/>"
                svg += "<text x=\"\(left - 5)\" y=\"\(y(micros) + 4)\" text-anchor=\"end\">\(label)</text>\n"
            }
            for (level, label) in [(0.0, "0%"), (1, "90%"), (2, "99%"), (3, "99.9%"), (4, "99.99%"), (5, "99.999%")] {
                svg +=
                    "<line x1=\"\(x(level))\" x2=\"\(x(level))\" y1=\"\(originY)\" y2=\"\(originY + panelHeight)\" stroke=\"#ddd\"/>"
                svg +=
                    "<text x=\"\(x(level))\" y=\"\(originY + panelHeight + 15)\" text-anchor=\"middle\">\(label)</text>\n"
            }
            for (lineIndex, (subject, points)) in lines.enumerated() {
                let color = palette[lineIndex % palette.count]
                let path = points.map { String(format: "%.1f,%.1f", x($0.0), y($0.1)) }.joined(separator: " ")
                svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.6\" points=\"\(path)\"/>\n"
                let legendY = originY + 14 + Double(lineIndex) * 16
                svg +=
                    "<line x1=\"\(left + plotWidth + 10)\" x2=\"\(left + plotWidth + 30)\" y1=\"\(legendY - 4)\" y2=\"\(legendY - 4)\" stroke=\"\(color)\" stroke-width=\"2\"/>"
                svg += "<text x=\"\(left + plotWidth + 35)\" y=\"\(legendY)\">\(escape(subject))</text>\n"
            }
        }
        return svg + "</svg>\n"
    }

    /// (log10(1/(1−p)), latency µs) points from HdrHistogram's percentile iteration.
    static func curve(_ histogram: Histogram<UInt64>) -> [(Double, Double)] {
        var points: [(Double, Double)] = []
        for step in histogram.percentiles(ticksPerHalfDistance: 5) {
            let fraction = step.percentileLevelIteratedTo / 100
            guard fraction < 1 else { break }
            points.append((log10(1 / (1 - fraction)), Double(step.value) / 1e3))
        }
        // The maximum, drawn at the last level a sample of this size can resolve.
        let tail = log10(max(Double(histogram.totalCount), 1))
        points.append((tail, Double(histogram.max) / 1e3))
        return points
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }
}
