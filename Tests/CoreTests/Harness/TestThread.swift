import Dispatch
import Glibc
import RunLoopKit
import Synchronization

/// A result being computed on a new thread. Each program gets its own thread, so its loop is
/// fresh and is torn down when the thread exits.
final class FreshThread<T: Sendable>: Sendable {
    private let result = Lock<T?>(nil)
    private let done = Latch()

    /// Starts `body` on a new thread.
    init(_ body: @escaping @Sendable () -> T) {
        let (result, done) = (result, done)
        do {
            try spawnThread {
                let value = body()
                result.withLock { $0 = value }
                done.open()
            }
        } catch {
            fatalError("cannot start a test thread: \(error)")
        }
    }

    /// The result, or `nil` if the thread did not finish within `deadline` (it is then left
    /// behind).
    func value(within deadline: Duration) -> T? {
        guard done.wait(for: deadline) else { return nil }
        return result.withLock { $0 }
    }
}

/// Starts a detached pthread running `body`.
func spawnThread(_ body: @escaping @Sendable () -> Void) throws {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let result = pthread_create(&thread, nil, { pointer in
        Unmanaged<Box>.fromOpaque(pointer!).takeRetainedValue().body()
        return nil
    }, box)
    guard result == 0 else {
        Unmanaged<Box>.fromOpaque(box).release()
        throw SystemError("pthread_create", errno: result)
    }
    pthread_detach(thread)
}

/// A one-shot gate: `wait` blocks (without spinning) until `open` is called or time runs out.
final class Latch: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let opened = Atomic<Bool>(false)

    /// Opens the gate; later calls have no effect. Safe from any thread.
    func open() {
        if !opened.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }

    /// Waits until opened; false if `timeout` passed first.
    func wait(for timeout: Duration) -> Bool {
        let nanos = Int(timeout.nanosecondsClampedToZero)
        guard semaphore.wait(timeout: .now() + .nanoseconds(nanos)) == .success else { return false }
        semaphore.signal() // Stay open for other waiters.
        return true
    }
}
