import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › W2: Waking a
/// sleeping loop; W3: Posting work wakes the loop (differs from CFRunLoop); C2: No lost wakeups.
@Suite("Wakeups")
struct WakeTests {
    @Test("wakeUp from another thread ends the wait, not the run; a bare wake handles nothing", arguments: backends)
    func wakeUpEndsWaitOnly(_ backend: BackendKind) async throws {
        let (result, trace) = try await traced(backend) { loop, trace in
            loop.record([.beforeWaiting, .afterWaiting], into: trace)
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in trace("timer") }
            loop.add(timer, to: .default)
            let passes = Atomic<Int>(0)
            loop.add(
                Loop.Observer(activities: .beforeWaiting) { observer, _ in
                    switch passes.add(1, ordering: .relaxed).newValue {
                    case 1:
                        _ = try? whenAsleep(loop) {
                            loop.wakeUp()
                        }
                    default:
                        observer.invalidate()
                        timer.nextFireInstant = .now
                    }
                }, to: .default)
            return loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
        }
        #expect(result == .finished)
        #expect(trace.all == ["beforeWaiting", "afterWaiting", "beforeWaiting", "afterWaiting", "timer"])
    }

    @Test("wakeUp while the loop is not running has no effect: the next run starts with none", arguments: backends)
    func wakeUpWhenIdle(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            loop.wakeUp()
            loop.record([.afterWaiting], into: trace)
            loop.add(try recordingTimer("timer", after: .milliseconds(2), into: trace), to: .default)
        }
        #expect(result == .finished)
        #expect(trace.all == ["afterWaiting", "timer"])
    }

    @Test("wakeUp while the loop is busy makes the next wait return at once", arguments: backends)
    func wakeUpWhileBusy(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.record([.afterWaiting], into: trace)
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in trace("timer") }
            loop.add(timer, to: .default)
            loop.perform { loop.wakeUp() }
            loop.add(
                Loop.Observer(activities: .afterWaiting, repeats: false, order: 1) { _, _ in
                    trace("woke")
                    timer.invalidate()
                }, to: .default)
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["afterWaiting", "woke"])
    }

    @Test("a block posted to a busy loop runs in that pass and leaves no wake behind", arguments: backends)
    func busyPostLeavesNoWake(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            loop.record([.afterWaiting], into: trace)
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            loop.perform {
                loop.perform {
                    trace("posted while busy")
                    // Stop once the loop sleeps again: a wake left behind would add a pass first.
                    _ = try? whenAsleep(loop) {
                        loop.stop()
                    }
                }
            }
        }
        // The pending block makes the first wait a poll; the second sleeps until the stop.
        #expect(result == .stopped)
        #expect(trace.all == ["afterWaiting", "posted while busy", "afterWaiting"])
    }

    @Test("work posted at random moments from other threads is never lost", arguments: backends)
    func noLostWakeups(_ backend: BackendKind) async throws {
        let rounds = 1_000
        let handled = try await onLoopThread(backend) { loop in
            let count = Atomic<Int>(0)
            let port = try Loop.Port<Int>()
            let portSource = Loop.Source(port: port) { _ in count.add(1, ordering: .relaxed) }
            let signalSource = Loop.Source { count.add(1, ordering: .relaxed) }
            loop.add(portSource, to: .default)
            loop.add(signalSource, to: .default)
            let acknowledged = Atomic<Int>(0)
            _ = try TestThread {
                var random = SeededRandom(0x9E37_79B9_7F4A_7C15)
                for round in 0..<rounds {
                    // Vary the moment: sometimes right away, sometimes after the loop went to sleep.
                    if random.next() >> 62 == 0, !spinUntilWaiting(loop) { return loop.stop() }
                    switch round % 3 {
                    case 0: loop.perform { count.add(1, ordering: .relaxed) }
                    case 1: signalSource.signal()
                    default: port.send(round)
                    }
                    // Wait (by yielding) until the loop handled it: a lost wakeup would hang here.
                    let deadline = ContinuousClock.now + generousDeadline
                    while count.load(ordering: .relaxed) <= round, ContinuousClock.now < deadline { sched_yield() }
                    acknowledged.store(round + 1, ordering: .relaxed)
                }
                loop.perform { loop.stop() }
            }
            loop.run()
            portSource.invalidate()
            signalSource.invalidate()
            return count.load(ordering: .relaxed)
        }
        #expect(handled == rounds)
    }

    @Test("adding a descriptor source from another thread arms it in the sleeping loop", arguments: backends)
    func addSourceFromAnotherThread(_ backend: BackendKind) async throws {
        try await withPipe { pipe in
            let (result, trace) = try await tracedRun(backend) { loop, trace in
                let timer = try Loop.Timer(after: .seconds(3600)) { _ in }
                loop.add(timer, to: .default)
                let ref = WeakRef<Loop.Source>()
                let source = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                    trace("readable")
                    ref.value!.invalidate()
                    timer.invalidate()
                }
                ref.value = source
                pipe.fill()
                _ = try whenAsleep(loop) {
                    loop.add(source, to: .default)
                }
            }
            #expect(result == .finished)
            #expect(trace.all == ["readable"])
        }
    }
}
