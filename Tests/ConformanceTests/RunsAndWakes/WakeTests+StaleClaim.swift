import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// One run › 3.4: every wait that ends has a reason — a wake claimed for one sleep never ends
/// the next (behaviour contract, Sources/Core/RunLoopKit.docc/BehaviourContract.md › C2: No
/// lost wakeups).
extension WakeTests {
    /// A poster sees sleep S1 and is held (a debug-build hook) before it claims S1's wake; a
    /// port message ends S1 meanwhile, and the loop goes back to sleep (S2). Released, the
    /// poster's claim must fail: it was for S1. Before the fix a sleep had no number, so the
    /// claim landed on S2 and woke it for nothing (an extra pass counted as woken).
    ///
    /// A wake that never comes can only be watched for a while: S2 is given a second to end by
    /// itself (a stale claim's write ends it within microseconds), then the loop is stopped.
    /// A missed stale wake could only make this pass, never fail wrongly.
    ///
    /// Debug builds only: the hook that holds the poster (`Loop.holdWakesAfterSeeingSleep(_:)`)
    /// is compiled in debug builds alone, so a release run reports the test skipped.
    @Test(
        "a poster that saw one sleep cannot wake the next one",
        .enabled(if: isDebugBuild, "needs Loop.holdWakesAfterSeeingSleep(_:), a hook only debug builds compile"),
        arguments: backends)
    func staleClaimDoesNotWakeNextSleep(_ backend: BackendKind) async throws {
        #if DEBUG
        let (_, trace) = try await traced(backend) { loop, trace in
            let port = try Loop.Port<Int>()
            let source = Loop.Source(port: port) { _ in trace("port") }
            loop.add(source, to: .default)
            loop.record([.beforeWaiting, .afterWaiting, .exit], into: trace)
            let (posterSawSleep, releasePoster, posterDone, secondSleepEnded) = (Latch(), Latch(), Latch(), Latch())
            let sleeps = Atomic<Int>(0)
            let wakes = Atomic<Int>(0)
            loop.add(
                Loop.Observer(activities: .afterWaiting) { _, _ in
                    if wakes.add(1, ordering: .relaxed).newValue == 2 { secondSleepEnded.open() }
                }, to: .default)
            loop.add(
                Loop.Observer(activities: .beforeWaiting) { _, _ in
                    // Sleeps 1 and 2 start the scenario's threads; later ones need nothing.
                    let sleep = sleeps.add(1, ordering: .relaxed).newValue
                    if sleep <= 2 {
                        do {
                            _ = try whenAsleep(loop) {
                                if sleep == 1 {
                                    loop.holdWakesAfterSeeingSleep {
                                        posterSawSleep.open()
                                        releasePoster.wait()
                                    }
                                    do {
                                        _ = try TestThread {
                                            loop.wakeUp()
                                            posterDone.open()
                                        }
                                    } catch {
                                        trace("could not start the poster: \(error)")
                                    }
                                    posterSawSleep.wait()
                                    loop.holdWakesAfterSeeingSleep(nil)
                                    port.send(1) // Ends S1.
                                } else {
                                    releasePoster.open()
                                    if !posterDone.wait() { trace("the poster never returned") }
                                    if secondSleepEnded.wait(for: .seconds(1)) {
                                        trace("S2 ended with no work and no wake")
                                    }
                                    loop.stop()
                                }
                            }
                        } catch {
                            trace("could not start a thread: \(error)")
                        }
                    }
                }, to: .default)
            trace("run: \(loop.run(timeout: generousDeadline))")
            source.invalidate()
        }
        #expect(
            trace.all == [
                "beforeWaiting", "afterWaiting", "port", "beforeWaiting", "afterWaiting", "exit", "run: stopped",
            ])
        #else
        Issue.record("a debug-only test ran in a build without DEBUG")
        #endif
    }
}
