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
            // The time is taken as the wait returns, the timerfd read after: an armed absolute
            // timerfd is readable only once it expired, so the read adds nothing to know it.
            var woke: UInt64 = 0
            while woke == 0 { poller.wait { _ in woke = Time.now() } }
            FD.drain(fd)
            recorder.record(signed: Int64(bitPattern: woke &- target))
        }
        return recorder
    }

    private static func pwait2Lateness(_ delays: [UInt64]) -> Recorder {
        var recorder = Recorder()
        let poller = FloorPoller()
        let fd = FD.eventfd() // never written: the wait can only time out
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
        guard let ring = cbench_uring_open() else { return recorder }
        defer { cbench_uring_close(ring) }
        for delay in delays {
            let target = Time.now() + delay
            guard cbench_uring_sleep_until(ring, target) == 0 else { return recorder }
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
