import Glibc
import RunLoopKit
import TestSupport
import Testing

/// The loop's counters: passes and wakeups by reason, readable from any thread.
@Suite("Statistics")
struct StatisticsTests {
    @Test("each wakeup is counted once, under its reason", arguments: backends)
    func wakeupsByReason(_ backend: BackendKind) async throws {
        let pipe = try Pipe()
        defer { pipe.close() }
        let (before, after) = try await onLoopThread(backend) { loop in
            let before = loop.statistics
            // A timer wakeup. The timer and the idle timeout below are long enough that the
            // loop is asleep before they are due even when its thread is descheduled for a
            // while on a loaded machine (a wait whose deadline has already passed when the
            // loop gets to it is a poll, and no wakeup).
            loop.add(try Loop.Timer(after: .milliseconds(100)) { _ in }, to: .default)
            loop.run(timeout: generousDeadline)
            // A source wakeup.
            let ref = WeakRef<Loop.Source>()
            let source = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                pipe.drain()
                ref.value!.invalidate()
            }
            ref.value = source
            loop.add(source, to: .default)
            try spawnThread {
                while !loop.isWaiting { sched_yield() }
                pipe.fill()
            }
            loop.run(timeout: generousDeadline)
            // A wakeup by another thread, then an idle one (the run's timeout).
            let (keepAlive, _) = try keepAliveSource()
            loop.add(keepAlive, to: .default)
            try spawnThread {
                while !loop.isWaiting { sched_yield() }
                loop.perform { loop.stop() }
            }
            loop.run(timeout: generousDeadline)
            loop.run(timeout: .milliseconds(100))
            keepAlive.invalidate()
            return (before, loop.statistics)
        }
        #expect(before == Loop.Statistics())
        #expect(after.timerWakeups == 1)
        #expect(after.sourceWakeups == 1)
        #expect(after.wokenWakeups == 1)
        #expect(after.timeoutWakeups == 1)
        #expect(after.spuriousWakeups == 0)
        #expect(after.mainQueueWakeups == 0)
        #expect(after.wakeups == 4)
        #expect(after.passes >= 4)
    }
}
