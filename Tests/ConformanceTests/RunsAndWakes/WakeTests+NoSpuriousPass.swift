import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// One run › 3.4: every wait that ends has a reason; a wake makes one pass, not two.
extension WakeTests {
    @Test("a bare wakeUp while the loop sleeps makes exactly one extra pass", arguments: backends)
    func wakeUpMakesOnePass(_ backend: BackendKind) async throws {
        let (statistics, trace) = try await wokenInFirstSleep(backend) { loop in loop.wakeUp() }
        #expect(trace.all == ["beforeWaiting", "afterWaiting", "beforeWaiting", "afterWaiting", "exit"])
        #expect(statistics.wakeups[.woken] == 2)
        #expect(statistics.wakeups[.spurious] == 0)
    }

    @Test("a wake that arrives after its sleep ended (a late write) makes no pass of its own", arguments: backends)
    func lateWakeIsAbsorbed(_ backend: BackendKind) async throws {
        let (statistics, trace) = try await wokenInFirstSleep(backend) { loop in
            // What a poster that claimed a wake for an earlier sleep delivers late: a wake nobody
            // claimed for this sleep. Then a real one.
            loop.backendWaker.wake()
            loop.wakeUp()
        }
        #expect(trace.all == ["beforeWaiting", "afterWaiting", "beforeWaiting", "afterWaiting", "exit"])
        #expect(statistics.wakeups[.spurious] == 0)
    }

    /// Runs a loop of `backend` (kept alive by a source, its sleeps and exit traced): once its
    /// first sleep has begun, another thread does `wake` to it; once the second has, it stops
    /// the loop. Returns the loop's statistics and the trace.
    private func wokenInFirstSleep(
        _ backend: BackendKind, by wake: @escaping @Sendable (Loop) -> Void
    ) async throws -> (Loop.Statistics, Trace) {
        try await traced(backend) { loop, trace in
            let (keepAlive, _) = try keepAliveSource()
            loop.add(keepAlive, to: .default)
            loop.record([.beforeWaiting, .afterWaiting, .exit], into: trace)
            let sleeps = Atomic<Int>(0)
            loop.add(
                Loop.Observer(activities: .beforeWaiting) { _, _ in
                    let sleep = sleeps.add(1, ordering: .relaxed).newValue
                    _ = try? whenAsleep(loop) {
                        if sleep == 1 { wake(loop) } else { loop.stop() }
                    }
                }, to: .default)
            _ = loop.run(timeout: generousDeadline)
            keepAlive.invalidate()
            return loop.statistics
        }
    }

    @Test(
        "signals delivered to the loop thread neither restart its wait nor make passes: a timer still fires",
        arguments: backends)
    func signalsDoNotStarveTimers(_ backend: BackendKind) async throws {
        installNoOpHandler(for: SIGUSR2)
        let (fired, gaveUp, statistics) = try await onLoopThread(backend) { loop in
            let fired = Atomic<Bool>(false)
            let gaveUp = Atomic<Bool>(false)
            let signallerDone = Latch()
            let loopThread = pthread_self()
            // Threads inherit the signal mask of their creator, a test runner's worker thread
            // that blocks most signals: a blocked signal would never interrupt anything.
            unblock(SIGUSR2)
            let before = loop.statistics
            loop.add(
                try Loop.Timer(after: .milliseconds(50)) { _ in fired.store(true, ordering: .releasing) }, to: .default)
            _ = try TestThread {
                // A signal every 200 µs: far more often than the 50 ms timeout. A wait that
                // restarted with its whole timeout on EINTR would never reach the timer.
                let start = ContinuousClock.now
                while !fired.load(ordering: .acquiring) {
                    if ContinuousClock.now - start > .seconds(10) {
                        gaveUp.store(true, ordering: .releasing)
                        break
                    }
                    pthread_kill(loopThread, SIGUSR2)
                    usleep(200)
                }
                signallerDone.open()
            }
            let result = loop.run(timeout: generousDeadline)
            // The signaller must be done before this thread ends: its id could be reused.
            signallerDone.wait()
            let after = loop.statistics
            #expect(result == .finished)
            return (
                fired.load(ordering: .acquiring), gaveUp.load(ordering: .acquiring),
                (after.passes - before.passes, after.wakeups[.spurious])
            )
        }
        #expect(fired)
        #expect(!gaveUp)
        #expect(statistics.0 == 1)
        #expect(statistics.1 == 0)
    }
}

/// Lets `signal` be delivered to the calling thread.
func unblock(_ signal: Int32) {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, signal)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
}

/// Installs a handler that does nothing, without `SA_RESTART`: a blocked system call in the
/// signalled thread returns `EINTR`.
func installNoOpHandler(for signal: Int32) {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    sigaction(signal, &action, nil)
}
