import Dispatch
import Glibc
import RunLoopKit
import Synchronization
import TestSupport

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
    /// behind). Waits off Swift's cooperative pool.
    func value(within deadline: Duration) async -> T? {
        guard await done.waitOffPool(for: deadline) else { return nil }
        return result.withLock { $0 }
    }
}
