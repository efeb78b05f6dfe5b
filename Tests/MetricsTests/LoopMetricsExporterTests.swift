import CoreMetrics
import MetricsTestKit
import RunLoopKit
import RunLoopKitMetrics
import TestSupport
import Testing

/// `LoopMetricsExporter` against swift-metrics' test backend, handed to each exporter (never
/// bootstrapped for the process, which tests running in parallel would share).
@Suite("Metrics export")
struct LoopMetricsExporterTests {
    @Test("exported counters equal the loop's statistics, update after update", arguments: exportBackends)
    func countersEqualStatistics(_ backend: BackendKind) async throws {
        let metrics = TestMetrics()
        let dimensions = [("loop", "tested")]
        let snapshots = try await onLoopThread(backend) { loop -> [Loop.Statistics] in
            let exporter = try LoopMetricsExporter(
                loop: loop, label: "rl", dimensions: dimensions, factory: metrics)
            var snapshots: [Loop.Statistics] = []
            // Signals, blocks and a timer, then an update; then more, and another.
            for round in 1...2 {
                let ref = WeakRef<Loop.Source>()
                let performed = AtomicInt()
                let source = Loop.Source {
                    if performed.increment() < 3 * round { ref.value?.signal() } else { loop.stop() }
                }
                ref.value = source
                loop.add(source, to: .default)
                loop.add(Loop.Observer(activities: .beforeTimers, repeats: false) { _, _ in }, to: .default)
                loop.add(try Loop.Timer(after: .zero) { _ in }, to: .default)
                for _ in 0..<round { loop.perform {} }
                source.signal()
                loop.run(timeout: generousDeadline)
                source.invalidate()
                // A sleep: a run that times out. A thread descheduled past the deadline before
                // it could sleep polls instead, and counts no wakeup: that attempt is made
                // again, with twice the timeout, up to 256 ms (it counts a pass, which the
                // totals below include). Under the Thread Sanitizer on a loaded machine, 50
                // attempts of 1 ms all polled (seen in CI).
                let (keepAlive, _) = try keepAliveSource()
                loop.add(keepAlive, to: .default)
                let timeouts = loop.statistics.wakeups[.timeout]
                var attempts = 0
                repeat {
                    loop.run(timeout: .milliseconds(1 << min(attempts, 8)))
                    attempts += 1
                } while loop.statistics.wakeups[.timeout] == timeouts && attempts < 50
                keepAlive.invalidate()
                exporter.update()
                snapshots.append(loop.statistics)
            }
            return snapshots
        }
        let statistics = try #require(snapshots.last)
        #expect(snapshots.count == 2 && snapshots[0] != statistics)
        func total(_ name: String, _ extra: [(String, String)] = []) throws -> Int64 {
            try metrics.expectCounter("rl_\(name)", extra + dimensions).totalValue
        }
        #expect(try total("passes") == Int64(statistics.passes))
        let reasons: [(String, UInt64)] = [
            ("timer", statistics.wakeups[.timer]), ("source", statistics.wakeups[.source]),
            ("mainQueue", statistics.wakeups[.mainQueue]), ("woken", statistics.wakeups[.woken]),
            ("timeout", statistics.wakeups[.timeout]), ("spurious", statistics.wakeups[.spurious]),
        ]
        for (reason, count) in reasons {
            #expect(try total("wakeups", [("reason", reason)]) == Int64(count), "wakeups for \(reason)")
        }
        for kind in Loop.CalloutKind.allCases {
            #expect(try total("callouts", [("kind", "\(kind)")]) == Int64(statistics.callouts[kind]), "\(kind)")
        }
        let buckets = ["lt_10us", "lt_100us", "lt_1ms", "lt_10ms", "ge_10ms"]
        for (bucket, count) in zip(buckets, statistics.timerLateness.counts) {
            #expect(try total("timer_lateness", [("bucket", bucket)]) == Int64(count), "\(bucket)")
        }
        #expect(try total("descriptor_events") == Int64(statistics.descriptorEvents))
        #expect(try total("asleep_nanoseconds") == nanoseconds(statistics.timeAsleep))
        #expect(try total("awake_nanoseconds") == nanoseconds(statistics.timeAwake))
        // The scenario's own counts, so that equal totals are not equal zeros.
        #expect(statistics.callouts.version0Source == 9)
        #expect(statistics.callouts.block == 3)
        #expect(statistics.timerFires == 2)
        #expect(statistics.callouts.observer == 2)
        #expect(statistics.wakeups[.timeout] == 2)
        // Gauges: the loop is not running at the update; it ran, so the ratio is recorded.
        #expect(try metrics.expectGauge("rl_waiting", dimensions).lastValue == 0)
        let ratio = try #require(try metrics.expectGauge("rl_busy_ratio", dimensions).lastValue)
        #expect(ratio > 0 && ratio <= 1)
    }

    @Test("an export interval must be positive")
    func badInterval() async throws {
        let loop = try await onLoopThread(.default) { $0 }
        try await offThePool {
            #expect(
                throws: ArgumentError(
                    argument: "interval", value: "0.0 seconds", reason: "an export interval must be positive")
            ) {
                try LoopMetricsExporter(loop: loop, interval: .zero, factory: TestMetrics())
            }
        }
    }

    @Test("an exporter with an interval updates by itself", arguments: exportBackends)
    func periodic(_ backend: BackendKind) async throws {
        let metrics = TestMetrics()
        let updated = Latch()
        let factory = ObservedFactory(metrics, opening: updated, onIncrementOf: "runloop_passes")
        let passes = try await onLoopThread(backend) { loop -> UInt64 in
            loop.perform {}
            loop.run(timeout: .zero)
            let exporter = try loop.exportMetrics(every: .milliseconds(5), factory: factory)
            defer { exporter.stop() }
            // The event: the exporter's own update has added the pass to its counter.
            #expect(updated.wait())
            return loop.statistics.passes
        }
        #expect(passes == 1)
        #expect(try metrics.expectCounter("runloop_passes").totalValue == 1)
    }
}

/// The statistics' times in whole nanoseconds, as the exporter reports them.
private func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
}
