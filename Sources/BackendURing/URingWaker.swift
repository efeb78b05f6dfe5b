#if URing
internal import CLibURing
import Glibc
import RunLoopCore
import Synchronization

/// Wakes a ``URingBackend`` wait from any thread by posting a completion straight into the
/// loop's ring with `IORING_OP_MSG_RING`; wakes are coalesced while one is pending.
///
/// `MSG_RING` rather than an eventfd read on the ring: measured faster (about a microsecond
/// at the median; see "Design measurements" in the benchmark docs), and on the loop side a
/// message needs nothing: no eventfd to read, no request to re-arm after each wake, no read
/// buffer that must outlive the ring's asynchronous teardown.
///
/// Sending needs a ring to submit from: each waker owns a tiny sender ring, guarded by a
/// mutex since any thread may wake. Only the first wake after the loop saw the last one pays
/// for the system call.
final class URingWaker: BackendWaker {
    /// The sender ring and the target ring's descriptor; the target is `nil` once the
    /// backend is gone (its descriptor may then be reused for something else).
    private struct Sender {
        let ring: URingRing
        var target: Int32?
    }

    /// True from the first `wake()` until the waiting side sees that wake's completion.
    private let pending = Atomic<Bool>(false)
    private let sender: Lock<Sender>

    /// - Throws: `SystemError` when the sender ring cannot be created.
    init(target: Int32) throws(SystemError) {
        sender = Lock(Sender(ring: try URingRing(entries: 2, completionEntries: 4, flags: 0), target: target))
    }

    /// Makes the current or next wait of the backend return. Safe from any thread.
    func wake() {
        // Sequentially consistent, as in `consume()`: a poster's enqueue, then this exchange,
        // must not be reordered against the loop's clearing store followed by its look at the
        // queues, or each side could miss the other's write and the wake be lost.
        guard !pending.exchange(true, ordering: .sequentiallyConsistent) else { return }
        sender.withLock { sender in
            guard let target = sender.target else { return }
            while true {
                let entry = sender.ring.nextEntry()! // Empty: every send is reaped before returning.
                io_uring_prep_msg_ring(entry, target, 0, URingRequest.wake.userData, 0)
                // Waiting for the send's own completion costs nothing extra when the message
                // is posted inline (the usual case): the completion is there when
                // `io_uring_enter` returns. It tells us the message really arrived.
                var outcome: Int32?
                while outcome == nil {
                    let result = sender.ring.submitAndWait(timeout: nil)
                    if result < 0, ![EINTR, EAGAIN, EBUSY].contains(-result) {
                        trap(
                            "RunLoopKit: the io_uring waker cannot send: \(SystemError("io_uring_enter", errno: -result))"
                        )
                    }
                    sender.ring.harvest { _, sent in outcome = sent }
                }
                if outcome! >= 0 { return }
                // Only a failure to find room in an overflowing completion queue (-EOVERFLOW)
                // lands here: send again. A lost wake would leave `pending` set and the loop
                // deaf to every later wake.
                sched_yield()
            }
        }
    }

    /// Called on the waiting thread when the wake's completion arrived: the next wake sends.
    func consume() {
        pending.store(false, ordering: .sequentiallyConsistent)
    }

    /// Stops sending: the target ring is about to be closed. Called by the backend's deinit.
    func detach() {
        sender.withLock { $0.target = nil }
    }
}
#endif
