#if Epoll
internal import CEpoll
import Glibc
import RunLoopCore
import Synchronization

/// An eventfd that wakes a wait from any thread; writes are coalesced while a wake is pending.
final class EventWaker: BackendWaker {
    let descriptor: Int32
    /// True from the first `wake()` until the waiting side consumes the eventfd.
    private let pending = Atomic<Bool>(false)

    init() throws(SystemError) {
        descriptor = try retryingOnInterrupt("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    deinit { close(descriptor) }

    func wake() {
        // Only the first wake since the last consume pays for a write.
        guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt64 = 1
        while write(descriptor, &one, 8) < 0, currentErrno() == EINTR {}
    }

    /// Called by the waiting thread when the eventfd was reported readable.
    func consume() {
        // Clear `pending` before draining: a wake racing with us then either is drained here
        // (and its work is seen by the pass that follows) or writes again for the next wait.
        pending.store(false, ordering: .releasing)
        var counter: UInt64 = 0
        _ = read(descriptor, &counter, 8)
    }
}
#endif
