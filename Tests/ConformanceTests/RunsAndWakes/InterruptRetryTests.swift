import Glibc
import RunLoopCore
import RunLoopKit
import TestSupport
import Testing

/// `retryingOnInterrupt`, through which the backends make their system calls: a call that
/// fails with `EINTR` (a signal arrived during it) is made again; any other failure throws.
///
/// The calls it wraps (`epoll_create1`, `epoll_ctl`, `eventfd`) do not block, so a real signal
/// cannot be timed to interrupt one: the body fails with `EINTR` itself. Waits that signals
/// do interrupt are the loop's own business: *Faults: signals* and *Wakeups* (signals
/// delivered to the loop thread…) check that an interrupted wait sleeps on for the rest.
@Suite("Interrupted system calls")
struct InterruptRetryTests {
    @Test("retryingOnInterrupt makes a call again while it fails with EINTR, and returns its result")
    func retriesWhileInterrupted() async throws {
        try await offThePool {
            var calls = 0
            let result = try retryingOnInterrupt("read") { () -> Int32 in
                calls += 1
                guard calls > 3 else {
                    errno = EINTR
                    return -1
                }
                return 7
            }
            #expect(result == 7)
            #expect(calls == 4)
        }
    }

    @Test("retryingOnInterrupt throws SystemError(operation, errno) for any other errno, after one call")
    func throwsOtherErrors() async throws {
        try await offThePool {
            var calls = 0
            #expect(throws: SystemError("read", errno: EBADF)) {
                try retryingOnInterrupt("read") { () -> Int32 in
                    calls += 1
                    errno = EBADF
                    return -1
                }
            }
            #expect(calls == 1)
        }
    }
}
