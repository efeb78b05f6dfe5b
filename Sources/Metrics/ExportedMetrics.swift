import CoreMetrics
import RunLoopKit

/// The swift-metrics objects a ``LoopMetricsExporter`` reports to, made once.
struct ExportedMetrics: Sendable {
    let passes: Counter
    let wakeups: [(Counter, Loop.WakeupReason)]
    let callouts: [(Counter, Loop.CalloutKind)]
    let lateness: [Counter]
    let descriptorEvents: Counter
    let asleep: Counter
    let awake: Counter
    let waiting: Gauge
    let busyRatio: Gauge

    init(label: String, dimensions: [(String, String)], factory: any MetricsFactory) {
        func counter(_ name: String, _ extra: [(String, String)] = []) -> Counter {
            Counter(label: "\(label)_\(name)", dimensions: extra + dimensions, factory: factory)
        }
        passes = counter("passes")
        wakeups = Loop.WakeupReason.allCases.map { reason in (counter("wakeups", [("reason", "\(reason)")]), reason) }
        callouts = Loop.CalloutKind.allCases.map { kind in (counter("callouts", [("kind", "\(kind)")]), kind) }
        lateness = ["lt_10us", "lt_100us", "lt_1ms", "lt_10ms", "ge_10ms"].map {
            counter("timer_lateness", [("bucket", $0)])
        }
        descriptorEvents = counter("descriptor_events")
        asleep = counter("asleep_nanoseconds")
        awake = counter("awake_nanoseconds")
        waiting = Gauge(label: "\(label)_waiting", dimensions: dimensions, factory: factory)
        busyRatio = Gauge(label: "\(label)_busy_ratio", dimensions: dimensions, factory: factory)
    }

    /// Adds to each counter what its statistic grew by from `previous` to `now`, and records
    /// the gauges.
    func report(_ now: Loop.Statistics, since previous: Loop.Statistics, waiting isWaiting: Bool) {
        add(now.passes, previous.passes, to: passes)
        for (counter, reason) in wakeups { add(now.wakeups[reason], previous.wakeups[reason], to: counter) }
        for (counter, kind) in callouts { add(now.callouts[kind], previous.callouts[kind], to: counter) }
        for (counter, (current, before)) in zip(lateness, zip(now.timerLateness.counts, previous.timerLateness.counts))
        {
            add(current, before, to: counter)
        }
        add(now.descriptorEvents, previous.descriptorEvents, to: descriptorEvents)
        let asleepNanoseconds = (nanoseconds(now.timeAsleep), nanoseconds(previous.timeAsleep))
        let awakeNanoseconds = (nanoseconds(now.timeAwake), nanoseconds(previous.timeAwake))
        add(asleepNanoseconds.0, asleepNanoseconds.1, to: asleep)
        add(awakeNanoseconds.0, awakeNanoseconds.1, to: awake)
        waiting.record(isWaiting ? 1 : 0)
        let (awakeDelta, asleepDelta) = (
            awakeNanoseconds.0 - awakeNanoseconds.1, asleepNanoseconds.0 - asleepNanoseconds.1
        )
        if awakeDelta + asleepDelta > 0 { busyRatio.record(Double(awakeDelta) / Double(awakeDelta + asleepDelta)) }
    }

    /// Counters take signed 64-bit increments: a growth past that (never, in practice) is
    /// reported in pieces.
    private func add(_ now: UInt64, _ previous: UInt64, to counter: Counter) {
        guard now > previous else { return }
        var growth = now - previous
        while growth > 0 {
            let step = min(growth, UInt64(Int64.max))
            counter.increment(by: Int64(step))
            growth -= step
        }
    }

    /// The statistics' times are whole nanoseconds.
    private func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds / 1_000_000_000))
    }
}
