import RunLoopKit
import TestSupport
import Testing

/// Every counter of ``Loop/Statistics`` after a scripted scenario whose passes, callouts,
/// wakeups and events are known in advance.
@Suite("Statistics: exact counts")
struct StatisticsCountTests {
    @Test("a scripted scenario's counts are exact", arguments: backends)
    func exactCounts(_ backend: BackendKind) async throws {
        try await withPipe { pipe in
            // Version-0 performs (one per pass), blocks, timers, pipe readings and port messages.
            let (signals, blocks, timers, readings, messages) = (5, 7, 3, 4, 6)
            let (before, after, results) = try await onLoopThread(backend) { loop in
                let before = loop.statistics
                var results: [Loop.RunResult] = []

                // `signals` passes: each performs a source that signals itself again, until the
                // last stops the run; the blocks all run in the first pass. Every pass polls (it
                // performed a source), so the observer sees entry, one beforeTimers per pass, exit.
                let signalling: Loop.Mode = "signals"
                let performed = AtomicInt()
                let ref = WeakRef<Loop.Source>()
                let source = Loop.Source {
                    if performed.increment() < signals { ref.value!.signal() } else { loop.stop() }
                }
                ref.value = source
                loop.add(source, to: signalling)
                let observer = Loop.Observer(activities: [.entry, .beforeTimers, .exit]) { _, _ in }
                loop.add(observer, to: signalling)
                for _ in 0..<blocks { loop.perform(in: [signalling]) {} }
                source.signal()
                results.append(loop.run(signalling, timeout: generousDeadline))
                source.invalidate()
                observer.invalidate()

                // One pass: the timers are all due, the wait polls, they fire, the mode is empty.
                let timing: Loop.Mode = "timers"
                for _ in 0..<timers { loop.add(try Loop.Timer(after: .zero) { _ in }, to: timing) }
                results.append(loop.run(timing, timeout: generousDeadline))

                // `readings` runs of one pass: the pipe is readable before each, the wait sleeps and
                // returns with it at once, the handler drains it.
                let reading: Loop.Mode = "pipe"
                let pipeSource = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in pipe.drain() }
                loop.add(pipeSource, to: reading)
                for _ in 0..<readings {
                    pipe.fill()
                    results.append(loop.run(reading, timeout: generousDeadline, returnAfterSourceHandled: true))
                }
                pipeSource.invalidate()

                // One pass: the port holds every message; one event, one handler call per message.
                let receiving: Loop.Mode = "port"
                let port = try Loop.Port<Int>()
                let portSource = Loop.Source(port: port) { _ in }
                loop.add(portSource, to: receiving)
                for message in 0..<messages { port.send(message) }
                results.append(loop.run(receiving, timeout: generousDeadline, returnAfterSourceHandled: true))
                portSource.invalidate()
                return (before, loop.statistics, results)
            }
            #expect(before == Loop.Statistics())
            #expect(
                results
                    == [.stopped, .finished] + Array(repeating: .handledSource, count: readings) + [.handledSource])
            #expect(after.passes == UInt64(signals + 1 + readings + 1))

            var callouts = Loop.Statistics.Callouts()
            callouts.observer = UInt64(signals + 2)
            callouts.timer = UInt64(timers)
            callouts.version0Source = UInt64(signals)
            callouts.descriptorSource = UInt64(readings)
            callouts.portMessage = UInt64(messages)
            callouts.block = UInt64(blocks)
            #expect(after.callouts == callouts)
            #expect(after.callouts.total == UInt64(2 * signals + 2 + timers + readings + messages + blocks))
            #expect(after.timerFires == UInt64(timers))
            #expect(after.blocksRun == UInt64(blocks))
            #expect(after.timerLateness.total == UInt64(timers))
            #expect(after.descriptorEvents == UInt64(readings + 1))

            #expect(after.wakeups[.source] == UInt64(readings + 1))
            #expect(after.wakeups.total == UInt64(readings + 1))
            // Each of those sleeps was a real one (a system call between two readings of the clock).
            #expect(after.timeAsleep > .zero)
            #expect(after.timeAwake > .zero)
        }
    }
}
