import CBenchURing
import Glibc

/// The timer floors: waiting for an instant directly on the kernel, on a dedicated pthread.
enum TimerFloor: String, CaseIterable {
    /// A one-shot absolute timerfd, waited on in epoll_pwait2 (hrtimer, no timer slack).
    case timerfd = "floor-timerfd"
    /// epoll_pwait2 with a relative timeout and the thread's default 50 µs timer slack.
    case pwait2 = "floor-pwait2"
    /// The same with PR_SET_TIMERSLACK 1 ns: what Core could get with the slack change.
    case pwait2NoSlack = "floor-pwait2-slack1"
    /// An absolute IORING_OP_TIMEOUT on an io_uring (when the build has liburing).
    case uring = "floor-uring"

    static var available: [TimerFloor] { allCases }

    /// Waits for each `now + delay` in turn on a new thread; returns lateness samples (ns).
    func lateness(delays: [UInt64]) -> Recorder {
        let result = Owned(Recorder())
        let thread = PThread { [self] in
            switch self {
            case .timerfd: result.value = Self.timerfdLateness(delays)
            case .pwait2: result.value = Self.pwait2Lateness(delays)
            case .pwait2NoSlack:
                Syscalls.setTimerSlack(nanoseconds: 1)
                result.value = Self.pwait2Lateness(delays)
            case .uring: result.value = Self.uringLateness(delays)
            }
        }
        thread.join()
        return result.value
    }

    private static func timerfdLateness(_ delays: [UInt64]) -> Recorder {
        var recorder = Recorder()
        let poller = FloorPoller()
        let fd = FD.timerfd()
        defer { close(fd) }
        poller.add(fd, token: 0)
        for delay in delays {
            let target = Time.now() + delay
            FD.arm(fd, at: target)
            var fired = false
            while !fired { poller.wait { _ in fired = FD.drain(fd) > 0 } }
            recorder.record(signed: Int64(bitPattern: Time.now() &- target))
        }
        return recorder
    }

    private static func pwait2Lateness(_ delays: [UInt64]) -> Recorder {
        var recorder = Recorder()
        let poller = FloorPoller()
        let fd = FD.eventfd()  // never written: the wait can only time out
        defer { close(fd) }
        poller.add(fd, token: 0)
        for delay in delays {
            let target = Time.now() + delay
            poller.wait(timeout: delay) { _ in }
            recorder.record(signed: Int64(bitPattern: Time.now() &- target))
        }
        return recorder
    }

    private static func uringLateness(_ delays: [UInt64]) -> Recorder {
        var recorder = Recorder()
        var ring = io_uring()
        guard io_uring_queue_init(8, &ring, 0) == 0 else { return recorder }
        defer { io_uring_queue_exit(&ring) }
        for delay in delays {
            let target = Time.now() + delay
            var spec = __kernel_timespec(tv_sec: Int64(target / 1_000_000_000), tv_nsec: Int64(target % 1_000_000_000))
            let sqe = io_uring_get_sqe(&ring)
            io_uring_prep_timeout(sqe, &spec, 0, UInt32(IORING_TIMEOUT_ABS))
            _ = io_uring_submit_and_wait(&ring, 1)
            var cqe: UnsafeMutablePointer<io_uring_cqe>?
            while io_uring_wait_cqe(&ring, &cqe) == -EINTR {}
            if let cqe { io_uring_cqe_seen(&ring, cqe) }
            recorder.record(signed: Int64(bitPattern: Time.now() &- target))
        }
        return recorder
    }

    /// A periodic timerfd every `interval` for `seconds`: |gap between wakes − interval|.
    static func periodicJitter(interval: UInt64, seconds: Double) -> Recorder {
        let result = Owned(Recorder())
        PThread {
            var recorder = Recorder()
            let poller = FloorPoller()
            let fd = FD.timerfd()
            defer { close(fd) }
            poller.add(fd, token: 0)
            let start = Time.now()
            let end = start + UInt64(seconds * 1e9)
            FD.arm(fd, at: start + interval, interval: interval)
            var last = start
            while last < end {
                poller.wait { _ in FD.drain(fd) }
                let now = Time.now()
                recorder.record(nanoseconds: UInt64(abs(Int64(bitPattern: now &- last) - Int64(interval))))
                last = now
            }
            result.value = recorder
        }.join()
        return result.value
    }
}
