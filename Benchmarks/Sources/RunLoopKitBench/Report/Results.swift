import Histogram

/// Percentiles of one latency distribution, in nanoseconds.
struct LatencySummary: Codable, Sendable {
    var count: UInt64
    /// Samples that came out negative (a timer firing before its instant); recorded as 0.
    var early: UInt64
    /// The least sample (0 when one was early).
    var min: UInt64
    var p50: UInt64
    var p90: UInt64
    var p99: UInt64
    var p999: UInt64
    var max: UInt64
    var mean: Double

    init(_ histogram: Histogram<UInt64>, early: UInt64) {
        count = histogram.totalCount
        self.early = early
        min = histogram.min
        p50 = histogram.valueAtPercentile(50)
        p90 = histogram.valueAtPercentile(90)
        p99 = histogram.valueAtPercentile(99)
        p999 = histogram.valueAtPercentile(99.9)
        max = histogram.max
        mean = histogram.mean
    }
}

/// A latency recorder: HdrHistogram at three significant digits, 1 ns to 100 s.
struct Recorder: Sendable {
    var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: 100_000_000_000, numberOfSignificantValueDigits: .three)
    var early: UInt64 = 0

    mutating func record(nanoseconds: UInt64) {
        _ = histogram.record(Swift.max(nanoseconds, 1))
    }

    /// Adds `other`'s samples (a subject measured in rounds).
    mutating func merge(_ other: Recorder) {
        histogram.add(other.histogram)
        early += other.early
    }

    /// Records a signed sample; a negative one counts as early and is recorded as zero.
    mutating func record(signed nanoseconds: Int64) {
        if nanoseconds < 0 { early += 1 }
        record(nanoseconds: UInt64(Swift.max(nanoseconds, 0)))
    }
}

/// A named number of a non-latency result (blocks per second, wakeups per second, …).
struct Metric: Codable, Sendable {
    var name: String
    var value: Double
    var unit: String
}

/// One subject's result in one scenario variant.
struct Measurement: Codable, Sendable {
    var scenario: String
    var variant: String
    var subject: String
    var latency: LatencySummary?
    var metrics: [Metric]
    var note: String?
    /// Kept for the SVG plot; not part of the JSON.
    var histogram: Histogram<UInt64>?

    enum CodingKeys: String, CodingKey { case scenario, variant, subject, latency, metrics, note }

    func metric(_ name: String) -> Double? { metrics.first { $0.name == name }?.value }
}

/// Every measurement of a run, in the order made.
final class Results {
    private(set) var all: [Measurement] = []
    /// How the run went, printed above the tables (and in the JSON).
    private(set) var notes: [String] = []

    func note(_ text: String) {
        if !notes.contains(text) { notes.append(text) }
    }

    func add(
        latency recorder: Recorder, scenario: String, variant: String, subject: String, note: String? = nil,
        metrics: [Metric] = []
    ) {
        all.append(
            Measurement(
                scenario: scenario, variant: variant, subject: subject,
                latency: LatencySummary(recorder.histogram, early: recorder.early),
                metrics: metrics, note: note, histogram: recorder.histogram
            ))
    }

    func add(metrics: [Metric], scenario: String, variant: String, subject: String, note: String? = nil) {
        all.append(
            Measurement(
                scenario: scenario, variant: variant, subject: subject, latency: nil, metrics: metrics, note: note,
                histogram: nil))
    }

    /// A measurement made elsewhere: a child process's (see `MainSubject`).
    func append(_ measurement: Measurement) {
        all.append(measurement)
    }

    /// A subject that could not be measured here, with why.
    func skip(scenario: String, variant: String, subject: String, why: String) {
        all.append(
            Measurement(
                scenario: scenario, variant: variant, subject: subject, latency: nil, metrics: [],
                note: "not measured: \(why)", histogram: nil))
    }

    /// The (scenario, variant) groups, in the order first seen.
    var groups: [(scenario: String, variant: String, rows: [Measurement])] {
        var order: [String] = []
        var rows: [String: [Measurement]] = [:]
        for measurement in all {
            let key = "\(measurement.scenario)/\(measurement.variant)"
            if rows[key] == nil { order.append(key) }
            rows[key, default: []].append(measurement)
        }
        return order.map { key in
            let group = rows[key]!
            return (group[0].scenario, group[0].variant, group)
        }
    }

    func find(_ scenario: String, _ variant: String, _ subject: String) -> Measurement? {
        all.first { $0.scenario == scenario && $0.variant == variant && $0.subject == subject }
    }
}
