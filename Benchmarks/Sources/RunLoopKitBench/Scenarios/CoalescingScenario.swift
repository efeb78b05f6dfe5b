import CoreFoundation
import Foundation
import RunLoopKit
import Synchronization

/// **coalescing** — wakeups/s of 1,000 repeating 10 ms timers at seeded random phases, with
/// 5 ms tolerance and with none. With tolerance a loop may serve many timers per wakeup; the
/// work (100,000 fires/s) is the same, so fires/s is reported too, as a check.
/// Wakeups come from `Loop.statistics` (CF: a `kCFRunLoopAfterWaiting` observer), counted over
/// the measuring window after a 200 ms settling period.
struct CoalescingScenario {
    let context: Context

    func run() {
        let settings = context.settings
        let phases = SplitMix64.draws(settings.coalescingTimers, in: 0...9_999_999, seed: settings.seed, stream: 3)
        for tolerance in [5_000_000, 0] as [UInt64] {
            let variant = "tolerance-\(tolerance / 1_000_000)ms"
            for subject in settings.subjects where subject != .floor {
                if let why = Self.notMeasured(subject) {
                    context.results.skip(
                        scenario: "coalescing", variant: variant, subject: subject.description, why: why)
                    continue
                }
                context.progress.show("coalescing/\(variant) · \(subject) (\(settings.coalescingSeconds) s)")
                do {
                    let (wakeups, fires) = try measure(
                        subject, phases: phases, tolerance: tolerance, seconds: settings.coalescingSeconds)
                    context.results.add(
                        metrics: [
                            Metric(name: "wakeups/s", value: wakeups, unit: "1/s"),
                            Metric(name: "fires/s", value: fires, unit: "1/s"),
                        ], scenario: "coalescing", variant: variant, subject: subject.description,
                        note: subject == .coreFoundation ? "CF on Linux ignores tolerance" : nil)
                } catch {
                    context.results.skip(
                        scenario: "coalescing", variant: variant, subject: subject.description, why: "\(error)")
                }
            }
        }
    }

    private static func notMeasured(_ subject: Subject) -> String? {
        switch subject {
        case .nio: "NIO's scheduled tasks take no tolerance and its loop counts no wakeups"
        case .glib: "GLib's timeouts take no tolerance (g_timeout_add_seconds only rounds to whole seconds)"
        case .embedded: "an embedded loop's wakeups are its GLib loop's (it does not sleep itself)"
        case .main: MainSubject.unmeasuredReason
        case .kit, .coreFoundation, .floor: nil
        }
    }

    private func measure(
        _ subject: Subject, phases: [UInt64], tolerance: UInt64, seconds: Double
    ) throws -> (wakeups: Double, fires: Double) {
        let interval: UInt64 = 10_000_000
        let settle: UInt64 = 200_000_000
        switch subject {
        case let .kit(kind):
            let counter = FireCounter()
            let host = try KitHost.start(kind) { loop in
                let now = ContinuousClock.now
                for phase in phases {
                    let timer = try Loop.Timer(
                        fireAt: now + .nanoseconds(phase), interval: .nanoseconds(interval),
                        tolerance: .nanoseconds(tolerance)
                    ) { _ in
                        counter.bump()
                    }
                    loop.add(timer, to: .default)
                }
            }
            Time.sleep(nanoseconds: settle)
            let (stats0, fires0, t0) = (host.loop.statistics, counter.value, Time.now())
            Time.sleep(nanoseconds: UInt64(seconds * 1e9))
            let (stats1, fires1, t1) = (host.loop.statistics, counter.value, Time.now())
            host.stop()
            let elapsed = Double(t1 - t0) / 1e9
            return (Double(stats1.wakeups.total - stats0.wakeups.total) / elapsed, Double(fires1 - fires0) / elapsed)
        case .coreFoundation:
            let counter = FireCounter()
            let wakes = Owned<CFWakeCounter?>(nil)
            let host = CFHost.start { loop in
                let now = CFAbsoluteTimeGetCurrent()
                for phase in phases {
                    let timer = CFRunLoopTimerCreateWithHandler(
                        kCFAllocatorDefault, now + Double(phase) / 1e9, Double(interval) / 1e9, 0, 0
                    ) { _ in
                        counter.bump()
                    }
                    CFRunLoopTimerSetTolerance(timer, Double(tolerance) / 1e9)
                    CFRunLoopAddTimer(loop.ref, timer, CFLoop.mode)
                }
                wakes.value = CFWakeCounter(on: loop)
            }
            let counterCF = wakes.value!
            Time.sleep(nanoseconds: settle)
            let (wakes0, fires0, t0) = (counterCF.count.load(ordering: .relaxed), counter.value, Time.now())
            Time.sleep(nanoseconds: UInt64(seconds * 1e9))
            let (wakes1, fires1, t1) = (counterCF.count.load(ordering: .relaxed), counter.value, Time.now())
            host.stop()
            counterCF.invalidate()
            let elapsed = Double(t1 - t0) / 1e9
            return (Double(wakes1 - wakes0) / elapsed, Double(fires1 - fires0) / elapsed)
        case .floor, .nio, .glib, .embedded, .main:
            return (0, 0) // not run: coalescing is a run loop's policy, there is no floor
        }
    }
}

/// Timer fires, counted on the loop thread and read from the driver.
final class FireCounter: Sendable {
    private let count = Atomic<UInt64>(0)
    /// Only the loop thread writes: a relaxed load and store, no locked read-modify-write.
    @inline(__always)
    func bump() { count.store(count.load(ordering: .relaxed) &+ 1, ordering: .relaxed) }
    var value: UInt64 { count.load(ordering: .relaxed) }
}
