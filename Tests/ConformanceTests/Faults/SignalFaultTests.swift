import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Faults: the loop's thread is interrupted by signals thousands of times a second while it
/// waits and runs (a handler without `SA_RESTART`, so each interruption returns `EINTR`).
///
/// Only what holds on a loaded 2-core machine is asserted: nothing is lost, no timer fires
/// early, a timer is not starved (its run ends long before a generous deadline) and an
/// interruption costs at most one pass (the loop does not spin). How late a timer is under
/// signals is timing, and belongs to the benchmarks.
@Suite("Faults: signals")
struct SignalFaultTests {
    @Test(
        "a 50 ms timer fires, not early and not starved, while signals interrupt the wait; no spinning",
        arguments: backends)
    func timerUnderSignals(_ backend: BackendKind) async throws {
        let outcome = try await onLoopThread(backend) { loop in
            let storm = try SignalStorm()
            defer { storm.stop() }
            let due = Ref<ContinuousClock.Instant>()
            let firedAt = Ref<ContinuousClock.Instant>()
            let timer = try Loop.Timer(after: .milliseconds(50)) { timer in
                firedAt.value = .now
                due.value = timer.nextFireInstant
            }
            // Let the storm get going before the timer is added.
            spin(until: { storm.sent >= 10 }, "the signal storm never got going")
            let (before, sentBefore) = (loop.statistics, storm.sent)
            let start = ContinuousClock.now
            loop.add(timer, to: .default)
            let result = loop.run(timeout: generousDeadline)
            let after = loop.statistics
            return (
                result, ContinuousClock.now - start, after.passes - before.passes,
                after.wakeups[.spurious] - before.wakeups[.spurious],
                storm.sent - sentBefore, due.value, firedAt.value
            )
        }
        let (result, elapsed, passes, spurious, signals, due, firedAt) = outcome
        #expect(result == .finished)
        let (instant, fired) = try (#require(due), #require(firedAt))
        #expect(fired >= instant, "the timer fired \(instant - fired) early")
        // A timer restarted with its whole timeout at every interruption never fires while the
        // signals go on (20 s): 5 s is a hundred times the timer, and far from that.
        #expect(elapsed < .seconds(5), "the run took \(elapsed) for a 50 ms timer")
        // An interruption costs at most a pass (the loop recomputes what is left of its wait);
        // a loop that spins on EINTR makes many passes per signal.
        #expect(passes < 1000 && passes <= UInt64(signals) + 4, "\(passes) passes for \(signals) signals in \(elapsed)")
        // An interrupted wait is not a wakeup (Loop.Statistics: spurious wakeups are always zero).
        #expect(spurious == 0, "\(spurious) spurious wakeups for \(signals) signals")
    }

    @Test(
        "blocks, messages, signals and timers arriving during a signal storm are all handled, none early",
        arguments: backends)
    func nothingLostUnderSignals(_ backend: BackendKind) async throws {
        let blocks = scaled(20_000, minimum: 500)
        let timers = 200
        let outcome = try await onLoopThread(backend) { loop in
            let storm = try SignalStorm()
            defer { storm.stop() }
            spin(until: { storm.sent >= 10 }, "the signal storm never got going")
            let port = try Loop.Port<Int>()
            let violations = Violations()
            let (nextBlock, nextMessage, performs, fired) = (AtomicInt(), AtomicInt(), AtomicInt(), AtomicInt())
            let expectedMessages = blocks / 10
            let portSource = Loop.Source(port: port) { message in
                if message != nextMessage.value {
                    violations.record("message \(message) arrived when \(nextMessage.value) was due")
                }
                nextMessage.store(message + 1)
            }
            // The number of the producer's latest signal, stored before it signals; a perform
            // reads it when it begins, so a perform that read the last one began after the
            // last signal (signals coalesce: "performed after the last" is what they owe).
            let (signalsSent, seenAtPerform) = (AtomicInt(), AtomicInt())
            let signals = blocks / 100
            let signalled = Loop.Source {
                seenAtPerform.store(signalsSent.value)
                performs.increment()
            }
            loop.add(portSource, to: .default)
            loop.add(signalled, to: .default)
            // One-shot timers spread over the producer's run, each checked for being early.
            for index in 0..<timers {
                let instant = ContinuousClock.now + .microseconds(250 * index)
                loop.add(
                    try Loop.Timer(fireAt: instant) { _ in
                        if ContinuousClock.now < instant { violations.record("timer \(index) fired early") }
                        fired.increment()
                    }, to: .default)
            }
            let producer = try TestThread {
                for sequence in 0..<blocks {
                    loop.perform {
                        if sequence != nextBlock.value {
                            violations.record("block \(sequence) ran when \(nextBlock.value) was due")
                        }
                        nextBlock.store(sequence + 1)
                    }
                    if sequence % 10 == 9 { port.send(sequence / 10) }
                    if sequence % 100 == 99 {
                        signalsSent.increment()
                        signalled.signal()
                    }
                }
                loop.perform { loop.stop() }
            }
            let result = loop.run(timeout: generousDeadline)
            producer.join()
            // The last messages may still be in the port when the stop block runs. A third of
            // the generous deadline, so that what is missing is reported before this thread's
            // own deadline (onLoopThread's) hides it.
            let deadline = ContinuousClock.now + generousDeadline / 3
            while nextMessage.value < expectedMessages || fired.value < timers
                || seenAtPerform.value < signals || signalled.isSignalled,
                ContinuousClock.now < deadline
            {
                _ = loop.run(timeout: .milliseconds(10), returnAfterSourceHandled: true)
            }
            let leftSignalled = signalled.isSignalled
            portSource.invalidate()
            signalled.invalidate()
            return (
                result, nextBlock.value, nextMessage.value,
                (performs.value, signalsSent.value, seenAtPerform.value, leftSignalled), fired.value,
                violations.first, loop.registeredDescriptorCount
            )
        }
        let (result, ranBlocks, messages, signalling, firedTimers, violations, registered) = outcome
        let (performs, signals, seenAtLastPerform, leftSignalled) = signalling
        #expect(result == .stopped)
        #expect(ranBlocks == blocks)
        #expect(messages == blocks / 10)
        #expect(signals == blocks / 100)
        // Each signal is followed by a perform that began after it: the last perform read the
        // last signal's number, no signal was left pending, and none was performed unsent.
        #expect(seenAtLastPerform == signals, "the last perform began after signal \(seenAtLastPerform) of \(signals)")
        #expect(!leftSignalled, "the source was left signalled")
        #expect(performs >= 1 && performs <= signals, "\(performs) performs for \(signals) signals")
        #expect(firedTimers == timers)
        #expect(violations.isEmpty, "\(violations)")
        #expect(registered == 0)
    }
}
