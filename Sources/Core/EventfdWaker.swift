internal import CRunLoopSupport
import Glibc
import Synchronization

/// An eventfd that wakes a backend's wait from any thread; writes are coalesced while a wake
/// is pending.
///
/// For backends that watch a descriptor for their wakes (epoll, libevent): register
/// ``descriptor`` for reading like any other, and call ``consume()`` on the loop's thread when
/// it is reported ready. The waker owns the eventfd, so a `wake()` racing with the loop's
/// teardown never touches a freed backend.
public final class EventfdWaker: BackendWaker {
    /// The eventfd to watch for reading.
    public let descriptor: Int32
    /// True from the first `wake()` until the waiting side consumes the eventfd.
    private let pending = Atomic<Bool>(false)

    /// Creates the eventfd.
    ///
    /// - Throws: ``SystemError`` from `eventfd` when the process is out of descriptors.
    public init() throws(SystemError) {
        descriptor = try retryingOnInterrupt("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    deinit { close(descriptor) }

    /// Makes the eventfd readable. Safe from any thread; only the first wake since the last
    /// ``consume()`` pays for a write.
    public func wake() {
        guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt64 = 1
        while write(descriptor, &one, 8) < 0, currentErrno() == EINTR {}
    }

    /// Drains the eventfd; call on the loop's thread when it was reported readable.
    public func consume() {
        // Clear `pending` before draining: a wake racing with us then either is drained here
        // (and its work is seen by the pass that follows) or writes again for the next wait.
        pending.store(false, ordering: .releasing)
        var counter: UInt64 = 0
        _ = read(descriptor, &counter, 8)
    }
}
