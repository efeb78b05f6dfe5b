import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Timing: a timer added from any thread, at any moment of the pass, fires once due.
///
/// Window: a pass skips its timer step without the loop's lock when no queued timer can be due
/// yet (`TimerBound`, a lower bound of every queued instant, lowered under the lock when a
/// timer is queued and set again from the queues when a step finds nothing due). A poster adds
/// one-shot timers due now or a few microseconds ahead while the loop sleeps, while it is busy
/// in a block (mid-pass), and right after the previous timer fired (as the step that fired it
/// sets the bound again); each must fire before the next is added.
///
/// Catches: a bound set from the queues outside the lock or before a concurrent add's lowering,
/// or not lowered by an add — the loop then either sleeps until a deadline that has passed and
/// then polls forever without firing (its step skipped), or sleeps for good.
@Suite("Timer bound race window")
struct TimerBoundRaceTests {
    @Test(
        "timers added from another thread, asleep, busy or just after a fire, all fire", arguments: backends)
    func timersAddedFromAnotherThreadFire(_ backend: BackendKind) async throws {
        let rounds = scaled(5_000, minimum: 100)
        let (fired, stuckAt) = try await onLoopThread(backend) { loop -> (Int, Int?) in
            let fired = Atomic<Int>(0)
            let stuckAt = Lock<Int?>(nil)
            let keepAlive = Loop.Source {}
            loop.add(keepAlive, to: .default)
            defer { keepAlive.invalidate() }
            try spawnThread {
                defer { loop.stop() }
                for round in 0..<rounds {
                    switch round % 3 {
                    case 0: // asleep
                        while !loop.isWaiting { sched_yield() }
                    case 1: // busy: the timer is added while a block runs, mid-pass
                        let started = Atomic<Bool>(false)
                        loop.perform {
                            started.store(true, ordering: .releasing)
                            let until = ContinuousClock.now + .microseconds(20)
                            while ContinuousClock.now < until {}
                        }
                        while !started.load(ordering: .acquiring) { sched_yield() }
                    default: // right after the previous fire, as its step ends
                        break
                    }
                    let timer = try! Loop.Timer(after: .microseconds(round % 7)) { _ in
                        fired.add(1, ordering: .releasing)
                    }
                    loop.add(timer, to: .default)
                    let deadline = ContinuousClock.now + generousDeadline
                    while fired.load(ordering: .acquiring) <= round {
                        guard ContinuousClock.now < deadline else {
                            stuckAt.withLock { $0 = round }
                            return
                        }
                        sched_yield()
                    }
                }
            }
            loop.run(.default, timeout: generousDeadline * 4)
            return (fired.load(ordering: .acquiring), stuckAt.withLock { $0 })
        }
        #expect(stuckAt == nil, "timer \(stuckAt ?? -1) did not fire within \(generousDeadline)")
        #expect(fired == rounds)
    }
}
