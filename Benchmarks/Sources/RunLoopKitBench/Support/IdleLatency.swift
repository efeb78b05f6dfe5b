import Glibc

/// A hold on the kernel's CPU-idle latency limit (the PM QoS request of /dev/cpu_dma_latency),
/// kept at 0 µs while the wake scenarios run.
///
/// An idle CPU otherwise halts; on a virtual machine a halted vCPU leaves the guest, and waking
/// it again (an IPI to it, the host scheduling it back) can cost more than the whole loop: on
/// the 2-CPU development VM every subject's spinning-driver wake measured ~22 µs, floor
/// included, of which ~19 µs was the vCPU's return from halt. With the limit at 0 the idle CPU
/// polls instead, so a wake measures the post and the loop, not how deeply the loop's CPU slept
/// — the loop thread itself still blocks in its kernel wait. The request lasts while the file
/// stays open (the kernel drops it when the process exits) and needs root; without it the wake
/// figures carry the machine's idle exit, and the report says so.
final class IdleLatency {
    private var descriptor: Int32 = -1

    /// Asks for a 0 µs idle latency; false (with why) when the kernel or permissions refuse.
    func hold() -> (held: Bool, why: String) {
        guard descriptor < 0 else { return (true, "") }
        let fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return (false, "cannot open /dev/cpu_dma_latency: \(String(cString: strerror(errno)))") }
        var zero: Int32 = 0
        guard write(fd, &zero, 4) == 4 else {
            let why = String(cString: strerror(errno))
            close(fd)
            return (false, "cannot write /dev/cpu_dma_latency: \(why)")
        }
        descriptor = fd
        return (true, "")
    }

    /// Drops the request.
    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
