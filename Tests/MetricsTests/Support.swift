import CoreMetrics
import MetricsTestKit
import RunLoopKit
import Synchronization
import TestSupport

/// The backends of this build that can start here: each test runs once per backend. One that
/// cannot start is skipped, unless `RUNLOOPKIT_REQUIRED_BACKENDS` lists it (`RequiredBackendsTests`).
let exportBackends: [BackendKind] = startableBackends

/// A metrics backend that passes everything to `TestMetrics` and opens a latch when the
/// counter named `label` is first incremented: a test waits for that event, not for a time.
struct ObservedFactory: MetricsFactory {
    let metrics: TestMetrics
    let latch: Latch
    let label: String

    init(_ metrics: TestMetrics, opening latch: Latch, onIncrementOf label: String) {
        (self.metrics, self.latch, self.label) = (metrics, latch, label)
    }

    private final class ObservedCounter: CounterHandler {
        let wrapped: any CounterHandler
        let latch: Latch
        init(_ wrapped: any CounterHandler, _ latch: Latch) { (self.wrapped, self.latch) = (wrapped, latch) }
        func increment(by amount: Int64) {
            wrapped.increment(by: amount)
            latch.open()
        }
        func reset() { wrapped.reset() }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        let counter = metrics.makeCounter(label: label, dimensions: dimensions)
        return label == self.label ? ObservedCounter(counter, latch) : counter
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        metrics.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        metrics.makeMeter(label: label, dimensions: dimensions)
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        metrics.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        metrics.makeTimer(label: label, dimensions: dimensions)
    }
    func destroyCounter(_ handler: any CounterHandler) {
        metrics.destroyCounter((handler as? ObservedCounter)?.wrapped ?? handler)
    }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        metrics.destroyFloatingPointCounter(handler)
    }
    func destroyMeter(_ handler: any MeterHandler) { metrics.destroyMeter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { metrics.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { metrics.destroyTimer(handler) }
}
