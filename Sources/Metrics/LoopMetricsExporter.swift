import CoreMetrics
import Dispatch
import RunLoopKit

/// Reports a loop's `RunLoopKit/Loop/Statistics` through swift-metrics: counters for what the
/// loop counts, gauges for what it is now.
///
/// Each `update()` reads `RunLoopKit/Loop/statistics` and adds to each counter what its
/// statistic grew by since the previous update, so a counter's total is the statistic. Made
/// with an `interval`, the exporter also updates by itself that often, on a dispatch queue
/// (metrics are not urgent, and an update costs a snapshot and a few increments); `stop()`
/// or releasing the exporter ends that.
///
/// The metrics, each with the exporter's `dimensions` (`runloop` stands for its `label`):
///
/// | metric | kind | dimensions | value |
/// | --- | --- | --- | --- |
/// | `runloop_passes` | counter | | `RunLoopKit/Loop/Statistics/passes` |
/// | `runloop_wakeups` | counter | `reason`: `timer`, `source`, `mainQueue`, `woken`, `timeout`, `spurious` | wakeups by reason |
/// | `runloop_callouts` | counter | `kind`: each `RunLoopKit/Loop/CalloutKind` | `RunLoopKit/Loop/Statistics/callouts` |
/// | `runloop_timer_lateness` | counter | `bucket`: `lt_10us`, `lt_100us`, `lt_1ms`, `lt_10ms`, `ge_10ms` | `RunLoopKit/Loop/Statistics/timerLateness` |
/// | `runloop_descriptor_events` | counter | | `RunLoopKit/Loop/Statistics/descriptorEvents` |
/// | `runloop_asleep_nanoseconds` | counter | | `RunLoopKit/Loop/Statistics/timeAsleep` |
/// | `runloop_awake_nanoseconds` | counter | | `RunLoopKit/Loop/Statistics/timeAwake` |
/// | `runloop_waiting` | gauge | | 1 while the loop sleeps, else 0 (`RunLoopKit/Loop/isWaiting`) |
/// | `runloop_busy_ratio` | gauge | | time awake ÷ time in runs since the previous update (not recorded when the loop did not run) |
///
/// Safe to use from any thread; updates made at the same time are applied one after the other.
public final class LoopMetricsExporter: Sendable {
    /// The prefix of every metric's label.
    public let label: String
    /// The dimensions every metric carries.
    public let dimensions: [(String, String)]

    private let loop: Loop
    private let metrics: ExportedMetrics
    /// The statistics of the previous update: the next one reports what grew since.
    private let previous: Lock<Loop.Statistics>
    private let timer: Lock<(any DispatchSourceTimer)?>

    /// Creates an exporter for `loop`.
    ///
    /// - Parameters:
    ///   - loop: the loop whose statistics to report.
    ///   - label: the prefix of every metric's label, `runloop` by default (`runloop_passes`…).
    ///   - dimensions: dimensions added to every metric, e.g. `[("loop", "main")]`.
    ///   - interval: how often to update by itself; `nil` (the default) updates only when
    ///     `update()` is called. Positive.
    ///   - factory: the metrics backend; the one bootstrapped for the process by default.
    /// - Throws: `RunLoopKit/ArgumentError` naming `interval` when it is not positive.
    public init(
        loop: Loop, label: String = "runloop", dimensions: [(String, String)] = [], interval: Duration? = nil,
        factory: any MetricsFactory = MetricsSystem.factory
    ) throws(ArgumentError) {
        if let interval, interval <= .zero {
            throw ArgumentError(
                argument: "interval", value: "\(interval)", reason: "an export interval must be positive")
        }
        self.loop = loop
        self.label = label
        self.dimensions = dimensions
        self.metrics = ExportedMetrics(label: label, dimensions: dimensions, factory: factory)
        self.previous = Lock(Loop.Statistics())
        self.timer = Lock(nil)
        if let interval { start(every: interval) }
    }

    deinit {
        timer.withLock { $0.take() }?.cancel()
    }

    /// Reports what the loop's statistics grew by since the previous update (since the
    /// exporter was made, the first time), and the gauges as they are now.
    public func update() {
        let waiting = loop.isWaiting
        previous.withLock { previous in
            let now = loop.statistics
            metrics.report(now, since: previous, waiting: waiting)
            previous = now
        }
    }

    /// Stops the updates the exporter makes by itself; `update()` still works. Safe to call
    /// more than once.
    public func stop() {
        timer.withLock { $0.take() }?.cancel()
    }

    private func start(every interval: Duration) {
        let nanoseconds = Int(
            clamping: interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000)
        let source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        source.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        source.setEventHandler { [weak self] in self?.update() }
        timer.withLock { $0 = source }
        source.resume()
    }
}

extension Loop {
    /// Starts exporting this loop's statistics through swift-metrics every `interval`; see
    /// ``LoopMetricsExporter``. Keep the exporter: releasing it stops the export.
    ///
    /// - Throws: `ArgumentError` naming `interval` when it is not positive.
    public func exportMetrics(
        label: String = "runloop", dimensions: [(String, String)] = [], every interval: Duration = .seconds(10),
        factory: any MetricsFactory = MetricsSystem.factory
    ) throws(ArgumentError) -> LoopMetricsExporter {
        try LoopMetricsExporter(loop: self, label: label, dimensions: dimensions, interval: interval, factory: factory)
    }
}
