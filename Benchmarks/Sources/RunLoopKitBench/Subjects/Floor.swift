import CBenchSupport
import Glibc

/// The floor: the scenarios written directly on the system calls, with nothing else — an
/// epoll instance waited on with `epoll_pwait2`, eventfds, timerfds. What a run loop can at
/// best approach; the gap to it is the run loop's own cost.
final class FloorPoller {
    let descriptor: Int32
    private var events = [epoll_event](repeating: epoll_event(), count: 64)

    init() {
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(descriptor >= 0, "epoll_create1 failed: \(errno)")
    }

    deinit { close(descriptor) }

    /// Watches `fd` for readability, reporting `token`.
    func add(_ fd: Int32, token: UInt64) {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = token
        let result = epoll_ctl(descriptor, EPOLL_CTL_ADD, fd, &event)
        precondition(result == 0, "epoll_ctl failed: \(errno)")
    }

    /// Waits (forever, or for `timeout` nanoseconds) and calls `body` with each ready token.
    func wait(timeout: UInt64? = nil, _ body: (UInt64) -> Void) {
        let count: Int32 = events.withUnsafeMutableBufferPointer { buffer in
            if let timeout {
                var spec = Time.spec(nanoseconds: timeout)
                return epoll_pwait2(descriptor, buffer.baseAddress, Int32(buffer.count), &spec, nil)
            }
            return epoll_pwait2(descriptor, buffer.baseAddress, Int32(buffer.count), nil, nil)
        }
        guard count > 0 else { return }
        for index in 0..<Int(count) { body(events[index].data.u64) }
    }
}

/// Thin wrappers over eventfd and timerfd, for the floor and for descriptor sources.
enum FD {
    static func eventfd() -> Int32 {
        let fd = CBenchSupport.eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(fd >= 0, "eventfd failed: \(errno) — is RLIMIT_NOFILE too low?")
        return fd
    }

    @inline(__always)
    static func signal(_ fd: Int32) {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Reads (and so resets) an eventfd or timerfd counter; 0 if it was not ready.
    @inline(__always)
    @discardableResult
    static func drain(_ fd: Int32) -> UInt64 {
        var value: UInt64 = 0
        return read(fd, &value, 8) == 8 ? value : 0
    }

    static func timerfd() -> Int32 {
        let fd = Syscalls.timerfd_create(CLOCK_MONOTONIC, Syscalls.timerfdCloexec | Syscalls.timerfdNonblock)
        precondition(fd >= 0, "timerfd_create failed: \(errno)")
        return fd
    }

    /// Arms `fd` at the absolute CLOCK_MONOTONIC instant `at`, repeating every `interval` (0:
    /// one-shot).
    static func arm(_ fd: Int32, at: UInt64, interval: UInt64 = 0) {
        var spec = itimerspec(it_interval: Time.spec(nanoseconds: interval), it_value: Time.spec(nanoseconds: at))
        let result = Syscalls.timerfd_settime(fd, Syscalls.timerfdAbsolute, &spec)
        precondition(result == 0, "timerfd_settime failed: \(errno)")
    }
}
