import Dispatch
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// The words a loop publishes and its monitors read, across threads: many short stalls while
/// other threads post work and monitors come and go. Run under the Thread Sanitizer too.
@Suite("Stall monitor under stress")
struct StallMonitorStressTests {
    @Test("reports alternate began and ended, with sane durations, while monitors come and go", arguments: backends)
    func comingAndGoing(_ backend: BackendKind) async throws {
        let threshold: Duration = .milliseconds(1)
        let reports = Lock<[StallMonitor.Report]>([])
        let stalls = scaled(200, minimum: 20)
        let ran = AtomicInt()
        try await onLoopThread(backend) { loop in
            let watching = try StallMonitor(loop: loop, threshold: threshold) { report in
                reports.withLock { $0.append(report) }
            }
            let pause = DispatchSemaphore(value: 0)
            // Another thread posts blocks, every fourth of which holds the loop for a few
            // thresholds (a timed wait on a semaphore nobody signals: a stall to report, not a
            // way to wait for an event), and starts and stops a second monitor meanwhile.
            _ = try TestThread {
                for index in 0..<stalls * 4 {
                    loop.perform {
                        if index % 4 == 0 { _ = pause.wait(timeout: .now() + .milliseconds(3)) }
                        if ran.increment() == stalls * 4 { loop.stop() }
                    }
                    if index % 50 == 0,
                        let other = try? StallMonitor(loop: loop, threshold: threshold, handler: { _ in })
                    {
                        other.stop()
                    }
                }
            }
            let (keepAlive, _) = try keepAliveSource()
            loop.add(keepAlive, to: .default)
            loop.run(timeout: generousDeadline)
            keepAlive.invalidate()
            watching.stop()
        }
        let seen = reports.withLock { $0 }
        #expect(ran.value == stalls * 4)
        #expect(!seen.isEmpty)
        for (index, report) in seen.enumerated() {
            #expect(report.event == (index % 2 == 0 ? .began : .ended), "report \(index): \(report)")
            if report.event == .began {
                #expect(report.duration >= threshold, "report \(index): \(report)")
            } else {
                #expect(report.duration >= seen[index - 1].duration, "report \(index): \(report)")
                #expect(report.phase == seen[index - 1].phase && report.callout == seen[index - 1].callout)
            }
        }
    }
}
