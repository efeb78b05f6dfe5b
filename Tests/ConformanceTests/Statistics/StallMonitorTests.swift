import Dispatch
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// `StallMonitor`: a watchdog thread that reports a loop busy past a threshold, once when the
/// stall is seen and once when it ends, and never a loop that makes quick passes or sleeps.
@Suite("Stall monitor")
struct StallMonitorTests {
    /// Long enough that nothing but the blocked callout comes near it on a loaded machine.
    static let threshold: Duration = .milliseconds(200)

    @Test(
        "a callout blocked past the threshold is reported once, then its end once",
        arguments: backends, [Loop.CalloutKind.timer, .block, .version0Source])
    func blockedCallout(_ backend: BackendKind, _ kind: Loop.CalloutKind) async throws {
        let reports = Lock<[StallMonitor.Report]>([])
        let began = Latch()
        let ended = Latch()
        let result = try await onLoopThread(backend) { loop in
            let monitor = try StallMonitor(loop: loop, threshold: Self.threshold) { report in
                reports.withLock { $0.append(report) }
                report.event == .began ? began.open() : ended.open()
            }
            // Blocked until the monitor has reported the stall: no sleep, no guess.
            let stall: @Sendable () -> Void = { began.wait() }
            switch kind {
            case .timer:
                loop.add(try Loop.Timer(after: .zero) { _ in stall() }, to: .default)
            case .block:
                loop.perform(stall)
            default:
                let ref = WeakRef<Loop.Source>()
                let source = Loop.Source {
                    stall()
                    ref.value?.invalidate()
                }
                ref.value = source
                loop.add(source, to: .default)
                source.signal()
            }
            let result = loop.run(timeout: generousDeadline)
            // Not running now: the monitor sees the loop idle, and the stall over.
            ended.wait()
            monitor.stop()
            return result
        }
        #expect(result == .finished)
        let seen = reports.withLock { $0 }
        let phase: Loop.PassPhase = kind == .timer ? .timers : kind == .block ? .blocks : .version0Sources
        #expect(seen.map(\.event) == [.began, .ended])
        #expect(seen.map(\.phase) == [phase, phase])
        #expect(seen.map(\.callout) == [kind, kind])
        #expect(seen.first.map { $0.duration >= Self.threshold } == true)
        #expect(seen.count == 2 && seen[1].duration >= seen[0].duration)
    }

    @Test("the loop's own work is named when no callout is under way")
    func reportNamesPhase() async throws {
        try await offThePool {
            let report = StallMonitor.Report(event: .began, phase: .beforeWaiting, callout: nil, duration: .seconds(2))
            #expect(report.description == "stall began: 2 s in phase beforeWaiting")
            let callout = StallMonitor.Report(
                event: .ended, phase: .timers, callout: .timer, duration: .milliseconds(1500))
            #expect(callout.description == "stall ended: 1 s in a timer callout (phase timers)")
        }
    }

    @Test("quick passes and long sleeps are never reported", arguments: backends)
    func noFalseStalls(_ backend: BackendKind) async throws {
        let reports = Lock<[StallMonitor.Report]>([])
        let (passes, looks) = try await onLoopThread(backend) { loop in
            let monitor = try StallMonitor(loop: loop, threshold: Self.threshold) { report in
                reports.withLock { $0.append(report) }
            }
            // Quick passes, a millisecond apart, until the monitor has looked four times.
            let ticker = try Loop.Timer(after: .zero, repeating: .milliseconds(1)) { _ in
                if monitor.looks >= 4 { loop.stop() }
            }
            loop.add(ticker, to: .default)
            loop.run(timeout: generousDeadline)
            ticker.invalidate()
            // Sleeps of twice the threshold, until the monitor has looked three more times.
            let (keepAlive, _) = try keepAliveSource()
            loop.add(keepAlive, to: .default)
            let looked = monitor.looks
            while monitor.looks < looked + 3 { loop.run(timeout: Self.threshold * 2) }
            keepAlive.invalidate()
            monitor.stop()
            return (loop.statistics.passes, monitor.looks)
        }
        #expect(reports.withLock { $0 }.isEmpty)
        #expect(passes > 4)
        #expect(looks >= 7)
    }

    @Test("stop ends the monitor's thread at once, twice is harmless, and a bad threshold is refused")
    func lifecycle() async throws {
        let loop = try await onLoopThread(.default) { $0 }
        let monitor = try StallMonitor(loop: loop, threshold: .seconds(3600)) { _ in }
        monitor.stop()
        monitor.stop()
        #expect(monitor.threshold == .seconds(3600))
        #expect(
            throws: ArgumentError(
                argument: "threshold", value: "0.0 seconds", reason: "a stall threshold must be positive")
        ) {
            try StallMonitor(loop: loop, threshold: .zero) { _ in }
        }
    }

    @Test("stop from the handler, and releasing a monitor, end its thread", arguments: backends)
    func stopFromHandler(_ backend: BackendKind) async throws {
        let stopped = Latch()
        let result = try await onLoopThread(backend) { loop in
            let ref = Ref<StallMonitor>()
            let monitor = try StallMonitor(loop: loop, threshold: .milliseconds(20)) { _ in
                ref.value?.stop()
                stopped.open()
            }
            ref.value = monitor
            loop.perform { stopped.wait() }
            let result = loop.run(timeout: generousDeadline)
            ref.value = nil
            return result
        }
        #expect(result == .finished)
        #expect(stopped.isOpen)
    }
}
