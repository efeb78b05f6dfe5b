import CBenchSupport
import Glibc

/// timerfd, prctl and gettid, from the harness's C shim (Glibc's Swift module lacks them).
enum Syscalls {
    static let timerfdCloexec = Int32(TFD_CLOEXEC)
    static let timerfdNonblock = Int32(TFD_NONBLOCK)
    static let timerfdAbsolute = Int32(TFD_TIMER_ABSTIME)

    static func timerfd_create(_ clock: Int32, _ flags: Int32) -> Int32 { CBenchSupport.timerfd_create(clock, flags) }

    static func timerfd_settime(_ fd: Int32, _ flags: Int32, _ value: inout itimerspec) -> Int32 {
        CBenchSupport.timerfd_settime(fd, flags, &value, nil)
    }

    /// Sets the calling thread's timer slack (PR_SET_TIMERSLACK); 0 restores the default.
    @discardableResult
    static func setTimerSlack(nanoseconds: UInt) -> Int32 { bench_set_timer_slack(nanoseconds) }

    /// The calling thread's kernel id.
    static func threadID() -> Int32 { bench_gettid() }
}
