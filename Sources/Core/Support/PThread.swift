internal import CRunLoopSupport
import Glibc

/// A POSIX thread running a closure: how ``LoopThread``, the tests and the fixtures start
/// threads.
///
/// A plain thread of its own, not one of libdispatch's pool: a loop belongs to its thread and
/// keeps it for as long as it runs. Join or detach each thread exactly once.
package struct PThread: Sendable {
    private let handle: pthread_t

    /// Starts a thread running `body`.
    ///
    /// - Parameters:
    ///   - name: the thread's name (Linux keeps the first 15 bytes); `nil` keeps the name it
    ///     inherits from the thread that starts it.
    ///   - body: what the thread runs; the thread exits when it returns.
    /// - Throws: ``SystemError`` from `pthread_create` (`EAGAIN`: out of threads or memory).
    package static func spawn(
        name: String? = nil, _ body: @escaping @Sendable () -> Void
    ) throws(SystemError) -> PThread {
        final class Box {
            let name: String?
            let body: @Sendable () -> Void
            init(_ name: String?, _ body: @escaping @Sendable () -> Void) { (self.name, self.body) = (name, body) }
        }
        var handle = pthread_t()
        let box = Unmanaged.passRetained(Box(name, body)).toOpaque()
        let result = pthread_create(
            &handle, nil,
            { pointer in
                let box = Unmanaged<Box>.fromOpaque(pointer!).takeRetainedValue()
                if let name = box.name { rlk_set_thread_name(name) }
                box.body()
                return nil
            }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw SystemError("pthread_create", errno: result)
        }
        return PThread(handle: handle)
    }

    private init(handle: pthread_t) {
        self.handle = handle
    }

    /// Waits until the thread has exited: after its thread-specific destructors ran, so after
    /// the teardown of the loop it had.
    package func join() {
        pthread_join(handle, nil)
    }

    /// Lets the thread go: it is never joined, and its resources are freed when it exits.
    package func detach() {
        pthread_detach(handle)
    }

    /// Whether this is the calling thread (which must not join itself).
    package var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }
}
