import Glibc

/// Clocks and sleeps the harness measures with.
///
/// Everything here reads CLOCK_MONOTONIC through the vDSO (no system call), so recording a
/// timestamp costs tens of nanoseconds and does not disturb what is measured. Timer lateness
/// of RunLoopKit subjects is measured on `ContinuousClock` instead, the clock its API uses.
enum Time {
    /// Nanoseconds on CLOCK_MONOTONIC.
    @inline(__always)
    static func now() -> UInt64 {
        var ts = Glibc.timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// CPU time consumed by the calling thread, in nanoseconds.
    static func threadCPU() -> UInt64 {
        var ts = Glibc.timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// CPU time consumed so far by thread `thread` (a kernel thread id) of this process, read
    /// from any thread: its CPU clock, whose id Linux derives from the thread id as glibc's
    /// `pthread_getcpuclockid` does (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
    static func threadCPU(_ thread: Int32) -> UInt64 {
        var ts = Glibc.timespec()
        let clock = clockid_t((~thread) << 3 | 6)
        guard clock_gettime(clock, &ts) == 0 else { return 0 }
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// CPU time consumed by every thread of the process, those that ended included, in
    /// nanoseconds (the scheduler's exact runtime, not getrusage's tick-sampled split).
    static func processCPU() -> UInt64 {
        var ts = Glibc.timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Sleeps in the kernel (never spins) for `nanoseconds`, resuming after signals.
    static func sleep(nanoseconds: UInt64) {
        var request = Glibc.timespec(
            tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = Glibc.timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }

    static func spec(nanoseconds: UInt64) -> timespec {
        Glibc.timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }
}

extension Duration {
    /// Whole nanoseconds, negative when the duration is.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
