import Glibc
import RunLoopKit
import Synchronization
import TestSupport

/// Interrupts one thread with a no-op signal thousands of times a second, from a helper
/// thread, so that every blocking system call it makes (the loop's wait first of all) returns
/// `EINTR` over and over.
///
/// The handler is installed without `SA_RESTART`, so the kernel does not restart interrupted
/// calls: the loop sees each interruption. `SIGUSR2` is used because nothing else in the test
/// process uses it, and only the target thread ever receives it (`pthread_kill`).
final class SignalStorm: Sendable {
    private final class Shared: Sendable {
        let running = Atomic<Bool>(true)
        let sent = Atomic<Int>(0)
    }

    static let signal = SIGUSR2
    private let shared: Shared
    private let helper: TestThread

    /// Starts signalling the calling thread every `period`, for at most `limit`.
    ///
    /// Unblocks the signal on the calling thread. Call ``stop()`` on the same thread before it
    /// exits: signalling a thread that has exited is undefined behaviour. `limit` only bounds the damage if a test fails before stopping.
    init(every period: Duration = .microseconds(200), for limit: Duration = .seconds(10)) throws {
        SignalStorm.installNoOpHandler
        // Threads inherit their creator's signal mask, and libdispatch's worker threads (where
        // tests start theirs) block nearly every signal: a blocked signal stays pending and
        // interrupts nothing.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigaddset(&unblocked, SignalStorm.signal)
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        let target = pthread_self()
        let shared = Shared()
        self.shared = shared
        let pause = period.timespecRoundedUp
        helper = try TestThread {
            let end = ContinuousClock.now + limit
            while shared.running.load(ordering: .acquiring), ContinuousClock.now < end {
                pthread_kill(target, SignalStorm.signal)
                shared.sent.add(1, ordering: .relaxed)
                var request = pause
                nanosleep(&request, nil)
            }
        }
    }

    /// How many signals were sent so far.
    var sent: Int { shared.sent.load(ordering: .relaxed) }

    /// Stops the helper and waits until it sent its last signal.
    func stop() {
        shared.running.store(false, ordering: .releasing)
        helper.join()
    }

    /// A handler that does nothing, installed once per process, without `SA_RESTART`.
    private static let installNoOpHandler: Void = {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        precondition(sigaction(signal, &action, nil) == 0, "sigaction failed: errno \(errno)")
    }()
}
