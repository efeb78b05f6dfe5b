internal import CRunLoopSupport
import Glibc

/// An eventfd: a counter in the kernel that any thread adds to, readable while it is not zero.
///
/// A plain handle, like a descriptor: whoever creates one closes it with ``close()``. Every
/// eventfd RunLoopKit makes is close-on-exec and non-blocking, so that draining one that is
/// already empty (another drain came first) returns instead of blocking the loop.
package struct EventCounter: Sendable {
    /// The eventfd, to watch for reading.
    package let descriptor: Int32

    /// Creates an eventfd whose count is zero.
    ///
    /// - Throws: ``SystemError`` from `eventfd` (`EMFILE` when the process is out of
    ///   descriptors).
    package init() throws(SystemError) {
        descriptor = try retryingOnInterrupt("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    /// An eventfd someone else made and closes (libdispatch's main-queue handle).
    package init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Adds one to the count, which makes the eventfd readable. Safe from any thread.
    package func signal() {
        var one: UInt64 = 1
        while write(descriptor, &one, MemoryLayout<UInt64>.size) < 0, currentErrno() == EINTR {}
    }

    /// Reads the count and resets it to zero; the eventfd is no longer readable until the
    /// next ``signal()``.
    ///
    /// - Returns: the count, 0 when it already was zero.
    @discardableResult
    package func drain() -> UInt64 {
        var count: UInt64 = 0
        while read(descriptor, &count, MemoryLayout<UInt64>.size) < 0 {
            if currentErrno() != EINTR { return 0 }
        }
        return count
    }

    /// Closes the eventfd.
    package func close() {
        _ = Glibc.close(descriptor)
    }
}
