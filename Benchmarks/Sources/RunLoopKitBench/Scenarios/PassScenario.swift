import CoreFoundation
import Foundation
import RunLoopKit

/// **pass** — what one pass costs when there is nothing to do: `run(mode, timeout: .zero)` on a
/// mode holding one version-0 source, one timer (an hour away) and one observer of every
/// activity, against CF's `CFRunLoopRunInMode(mode, 0, false)` on the same items. Reported: ns
/// per pass and passes per second, over `--passes` passes after a tenth as many to warm up.
/// This is the cost of every wake that finds less to do than it expected (a `signal()`'s extra
/// pass, a spurious readiness), and of a polling loop.
struct PassScenario {
    let context: Context

    func run() {
        let passes = context.settings.passes
        for subject in context.settings.subjects {
            context.progress.show("pass · \(subject) (\(passes))")
            let nanoseconds: UInt64?
            switch subject {
            case let .kit(kind):
                nanoseconds = try? kitPasses(kind, passes: passes)
            case .coreFoundation:
                nanoseconds = cfPasses(passes: passes)
            case .nio:
                context.results.skip(
                    scenario: "pass", variant: "empty-poll", subject: subject.description,
                    why: "a NIO event loop cannot be run for one pass")
                continue
            case .glib, .embedded:
                context.results.skip(
                    scenario: "pass", variant: "empty-poll", subject: subject.description,
                    why: subject == .glib
                        ? "GLib is measured in the wake, timer, throughput and idle scenarios"
                        : "an embedded loop's passes are GLib's to run")
                continue
            case .main:
                context.results.skip(
                    scenario: "pass", variant: "empty-poll", subject: subject.description,
                    why: MainSubject.unmeasuredReason)
                continue
            case .floor:
                continue
            }
            guard let nanoseconds else {
                context.results.skip(
                    scenario: "pass", variant: "empty-poll", subject: subject.description, why: "could not start")
                continue
            }
            let perPass = Double(nanoseconds) / Double(passes)
            context.results.add(
                metrics: [
                    Metric(name: "ns/pass", value: perPass, unit: "ns"),
                    Metric(name: "passes/s", value: 1e9 / perPass, unit: "1/s"),
                ], scenario: "pass", variant: "empty-poll", subject: subject.description,
                note: "1 source, 1 timer, 1 observer; timeout zero")
        }
    }

    private func kitPasses(_ kind: BackendKind, passes: Int) throws -> UInt64 {
        let outcome = Owned<Result<UInt64, any Error>?>(nil)
        PThread {
            outcome.value = Result {
                let loop = try Loop.current(backend: kind)
                let mode: Loop.Mode = "pass"
                let source = Loop.Source {}
                let timer = try Loop.Timer(after: .seconds(3600), repeating: .seconds(3600)) { _ in }
                let observer = Loop.Observer(activities: .allActivities) { _, _ in }
                loop.add(source, to: mode)
                loop.add(timer, to: mode)
                loop.add(observer, to: mode)
                defer {
                    source.invalidate()
                    timer.invalidate()
                    observer.invalidate()
                }
                for _ in 0..<passes / 10 { _ = loop.run(mode, timeout: .zero) }
                let start = Time.now()
                for _ in 0..<passes { _ = loop.run(mode, timeout: .zero) }
                return Time.now() - start
            }
        }.join()
        return try outcome.value!.get()
    }

    private func cfPasses(passes: Int) -> UInt64 {
        let outcome = Owned<UInt64>(0)
        PThread {
            let loop = CFRunLoopGetCurrent()!
            let mode: CFRunLoopMode = CFStringCreateWithCString(
                kCFAllocatorDefault, "pass", CFStringBuiltInEncodings.UTF8.rawValue)
            let source = CFSignalSource {}
            CFRunLoopAddSource(loop, source.source, mode)
            let timer = CFRunLoopTimerCreateWithHandler(
                kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + 3600, 3600, 0, 0
            ) { _ in }
            CFRunLoopAddTimer(loop, timer, mode)
            let observer = CFRunLoopObserverCreateWithHandler(
                kCFAllocatorDefault, CFRunLoopActivity.allActivities.rawValue, true, 0
            ) { _, _ in }
            CFRunLoopAddObserver(loop, observer, mode)
            for _ in 0..<passes / 10 { _ = CFRunLoopRunInMode(mode, 0, false) }
            let start = Time.now()
            for _ in 0..<passes { _ = CFRunLoopRunInMode(mode, 0, false) }
            outcome.value = Time.now() - start
            CFRunLoopObserverInvalidate(observer)
            CFRunLoopTimerInvalidate(timer)
            source.invalidate()
        }.join()
        return outcome.value
    }
}
