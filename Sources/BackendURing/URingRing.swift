#if URing
internal import CLibURing
import Glibc
import RunLoopCore

/// One io_uring instance through liburing: setup, submission entries, submitting, waiting
/// and harvesting completions.
///
/// liburing returns `-errno` instead of setting `errno`; the raw results are returned as they
/// are so the caller can tell `ETIME` (a timeout that ran out) from a failure. Not thread-safe:
/// one thread at a time.
final class URingRing {
    private let ring: UnsafeMutablePointer<io_uring>

    /// The ring's descriptor, e.g. the target of an `IORING_OP_MSG_RING`.
    var descriptor: Int32 { ring.pointee.ring_fd }

    /// Creates a ring, trying `flags` first and then no flags on kernels that predate them.
    ///
    /// - Throws: `SystemError` for `io_uring_setup` with the errno liburing reported.
    init(entries: UInt32, completionEntries: UInt32, flags: UInt32) throws(SystemError) {
        // Set up in a local: `self.ring` is assigned only on success, so a failed init never
        // runs `deinit` (which would exit and free a ring that was never set up).
        let ring = UnsafeMutablePointer<io_uring>.allocate(capacity: 1)
        ring.initialize(to: io_uring())
        var result: Int32 = 0
        // EINVAL means an unknown setup flag (a kernel older than the flag): retry with none,
        // which every io_uring kernel accepts.
        for attempt in [flags | UInt32(IORING_SETUP_CQSIZE), 0] {
            var params = io_uring_params()
            params.flags = attempt
            params.cq_entries = completionEntries
            result = io_uring_queue_init_params(entries, ring, &params)
            if result == 0 {
                self.ring = ring
                return
            }
            if result != -EINVAL { break }
        }
        ring.deallocate()
        throw SystemError("io_uring_setup", errno: -result)
    }

    deinit {
        io_uring_queue_exit(ring)
        ring.deallocate()
    }

    /// Whether the kernel knows `operation`; `false` also when it cannot say (before 5.6).
    func supports(_ operation: io_uring_op) -> Bool {
        guard let probe = io_uring_get_probe_ring(ring) else { return false }
        defer { io_uring_free_probe(probe) }
        return io_uring_opcode_supported(probe, Int32(operation.rawValue)) != 0
    }

    /// A free submission entry, or `nil` when the submission queue is full (submit first).
    func nextEntry() -> UnsafeMutablePointer<io_uring_sqe>? {
        io_uring_get_sqe(ring)
    }

    /// Submits the queued entries without waiting; the number submitted or `-errno`.
    func submit() -> Int32 {
        io_uring_submit(ring)
    }

    /// Submits the queued entries and waits for one completion or until `timeout` passes
    /// (`nil`: no limit), in one `io_uring_enter`. Non-negative, or `-errno` (`-ETIME`: the
    /// timeout ran out, and always for a zero timeout, which only polls).
    func submitAndWait(timeout: Duration?) -> Int32 {
        var completion: UnsafeMutablePointer<io_uring_cqe>?
        guard let timeout else { return io_uring_submit_and_wait_timeout(ring, &completion, 1, nil, nil) }
        if timeout <= .zero {
            // A poll: submit, and flush the completions waiting as task work, without arming
            // a timer and sleeping on it (a zero-length timed wait still goes to sleep and costs
            // a timer interrupt: measured, 30 µs per empty pass against 1.7 µs with epoll).
            let result = io_uring_submit_and_get_events(ring)
            return result < 0 ? result : -ETIME
        }
        let rounded = timeout.timespecRoundedUp
        var spec = __kernel_timespec(tv_sec: Int64(rounded.tv_sec), tv_nsec: Int64(rounded.tv_nsec))
        return io_uring_submit_and_wait_timeout(ring, &completion, 1, &spec, nil)
    }

    /// Calls `body` with the user data and result of every completion available now, oldest
    /// first, and hands their slots back to the kernel.
    func harvest(_ body: (_ userData: UInt64, _ result: Int32) -> Void) {
        let capacity: UInt32 = 64
        withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<io_uring_cqe>?.self, capacity: Int(capacity)) { batch in
            while true {
                // Also flushes completions the kernel kept aside while the queue was full.
                let count = io_uring_peek_batch_cqe(ring, batch.baseAddress!, capacity)
                if count == 0 { return }
                for index in 0..<Int(count) {
                    let completion = batch[index]!.pointee
                    body(completion.user_data, completion.res)
                }
                io_uring_cq_advance(ring, count)
            }
        }
    }
}
#endif
