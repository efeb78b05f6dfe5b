import CBenchSupport
import Glibc

/// The driver of every wake measurement: post work to a sleeping loop from another thread and
/// time until the loop thread runs it.
///
/// **Spinning** (the primary figure): before each post the driver spends the seeded gap
/// spinning on its CPU with a pause instruction, checks that the loop thread is asleep in the
/// kernel, records t0, posts and spins on the probe's atomic until the loop thread stored t1.
/// The driver never sleeps, so it never has to be woken or migrated, and its CPU never idles:
/// the figure is the post, the loop thread's wake-up and its pass, not the driver's own
/// scheduling or how deeply its CPU idles (for the loop's CPU, see `IdleLatency`). The loop,
/// which should be asleep when posted to, still is: the check reads its state in `/proc` (a
/// thread blocked in its wait reads `S`).
///
/// **Blocking** (a second figure, `perform-blocking`): the driver sleeps the gap in
/// `nanosleep` and waits for t1 on a semaphore (a futex): both threads go through the
/// scheduler, as two ordinary threads do.
enum WakeDriver {
    struct Run: Sendable {
        /// t1 − t0 of each post after the warm-up, in nanoseconds.
        var samples: [UInt64] = []
        /// Posts (after the warm-up) that found the loop thread not asleep even after 2 ms.
        var awakeAtPost = 0
        /// Whether a post was never run (10 s without a mark): the run ended there.
        var lost = false
    }

    static func spinning(_ probe: Probe, gaps: [UInt64], warmup: Int, post: (Int) -> Void) -> Run {
        var run = Run()
        run.samples.reserveCapacity(max(gaps.count - warmup, 0))
        for (index, gap) in gaps.enumerated() {
            spin(nanoseconds: gap)
            if !waitAsleep(probe.loopThread), index >= warmup { run.awakeAtPost += 1 }
            probe.arm()
            let t0 = Time.now()
            post(index)
            guard let t1 = probe.spin() else {
                run.lost = true
                return run
            }
            if index >= warmup { run.samples.append(t1 &- t0) }
        }
        return run
    }

    static func blocking(_ probe: Probe, gaps: [UInt64], warmup: Int, post: (Int) -> Void) -> Run {
        precondition(probe.blocking, "the blocking driver needs a blocking probe")
        var run = Run()
        run.samples.reserveCapacity(max(gaps.count - warmup, 0))
        for (index, gap) in gaps.enumerated() {
            Time.sleep(nanoseconds: gap)
            if !waitAsleep(probe.loopThread), index >= warmup { run.awakeAtPost += 1 }
            let t0 = Time.now()
            post(index)
            let t1 = probe.wait()
            if index >= warmup { run.samples.append(t1 &- t0) }
        }
        return run
    }

    /// Spins for `nanoseconds` with a CPU pause each turn.
    static func spin(nanoseconds: UInt64) {
        let end = Time.now() + nanoseconds
        while Time.now() < end {
            for _ in 0..<16 { bench_cpu_relax() }
        }
    }

    /// Whether thread `thread` is asleep, waiting up to 2 ms (spinning) for it to be; true when
    /// the thread is not known yet (before the first mark).
    static func waitAsleep(_ thread: Int32) -> Bool {
        guard thread != 0 else { return true }
        for _ in 0..<100 {
            if isAsleep(thread) { return true }
            spin(nanoseconds: 20_000)
        }
        return false
    }

    /// Reads the thread's state from /proc/self/task/TID/stat: `S` is an interruptible sleep,
    /// which is where epoll_pwait2, io_uring_enter and libevent's epoll wait block.
    static func isAsleep(_ thread: Int32) -> Bool {
        let fd = open("/proc/self/task/\(thread)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return true }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return true }
        // "tid (comm) S …": the state follows the last ')' (comm may itself hold one).
        guard let paren = buffer[..<count].lastIndex(of: UInt8(ascii: ")")), paren + 2 < count else { return true }
        return buffer[paren + 2] == UInt8(ascii: "S")
    }
}
