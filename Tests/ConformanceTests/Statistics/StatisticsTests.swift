import Glibc
import RunLoopKit
import TestSupport
import Testing

/// The loop's counters: passes and wakeups by reason, readable from any thread.
@Suite("Statistics")
struct StatisticsTests {
    @Test("each wakeup is counted once, under its reason", arguments: backends)
    func wakeupsByReason(_ backend: BackendKind) async throws {
        try await withPipe { pipe in
            let (before, after) = try await onLoopThread(backend) { loop in
                let before = loop.statistics
                // A timer wakeup. A wait whose deadline has already passed when the loop gets to
                // it (its thread descheduled on a loaded machine) is a poll, and no wakeup: the
                // timer, and the idle timeout below, are tried again until a wait slept.
                let timerSlept = try repeatUntilSlept(loop) {
                    loop.add(try Loop.Timer(after: .milliseconds(20)) { _ in }, to: .default)
                    loop.run(timeout: generousDeadline)
                }
                // A source wakeup.
                let ref = WeakRef<Loop.Source>()
                let source = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                    pipe.drain()
                    ref.value!.invalidate()
                }
                ref.value = source
                loop.add(source, to: .default)
                _ = try whenAsleep(loop) {
                    pipe.fill()
                }
                loop.run(timeout: generousDeadline)
                // A wakeup by another thread, then an idle one (the run's timeout). `isWaiting` turns
                // true as the loop publishes that it sleeps, just before its last look for work: a
                // block posted in between is found by that look, and the loop does not sleep. So the
                // post is tried again until the loop slept.
                let (keepAlive, _) = try keepAliveSource()
                loop.add(keepAlive, to: .default)
                let wokenSlept = try repeatUntilSlept(loop) {
                    _ = try whenAsleep(loop) {
                        loop.perform { loop.stop() }
                    }
                    loop.run(timeout: generousDeadline)
                }
                let timeoutSlept = repeatUntilSlept(loop) { loop.run(timeout: .milliseconds(20)) }
                keepAlive.invalidate()
                #expect(
                    timerSlept && wokenSlept && timeoutSlept,
                    "no attempt of 20 slept until its timer, another thread's block, or its timeout")
                return (before, loop.statistics)
            }
            #expect(before == Loop.Statistics())
            #expect(after.wakeups[.timer] == 1)
            #expect(after.wakeups[.source] == 1)
            #expect(after.wakeups[.woken] == 1)
            #expect(after.wakeups[.timeout] == 1)
            #expect(after.wakeups[.spurious] == 0)
            #expect(after.wakeups[.mainQueue] == 0)
            #expect(after.wakeups.total == 4)
            #expect(after.passes >= 4)
        }
    }
}
