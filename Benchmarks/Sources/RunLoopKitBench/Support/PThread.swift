import Glibc

/// A joinable POSIX thread running a closure.
///
/// The brief asks for every subject's loop on its own pthread (not a Foundation `Thread`,
/// whose start-up runs Foundation's own run-loop and autorelease machinery); only the
/// CoreFoundation subjects use `Thread`, as a Foundation program would.
struct PThread: Sendable {
    private let handle: pthread_t

    /// Starts `body` on a new thread.
    init(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            // Written once before the thread starts and read once by it: no sharing.
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
                box.body()
                return nil
            }, box)
        precondition(result == 0, "pthread_create failed: \(result)")
        handle = thread
    }

    /// Waits for the thread to end; call exactly once.
    func join() {
        pthread_join(handle, nil)
    }
}
