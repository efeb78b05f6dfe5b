import Dispatch
import RunLoopKit
import Synchronization

/// A one-shot gate: `wait` blocks (without spinning) until `open` is called or time runs out.
public final class Latch: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let opened = Atomic<Bool>(false)

    public init() {}

    /// Opens the gate; later calls have no effect. Safe from any thread.
    public func open() {
        if !opened.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }

    /// Whether the gate was opened.
    public var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Waits until opened; false if `timeout` passed first.
    @discardableResult
    public func wait(for timeout: Duration = generousDeadline) -> Bool {
        let nanos = Int(timeout.nanosecondsRoundedUp)
        guard semaphore.wait(timeout: .now() + .nanoseconds(nanos)) == .success else { return false }
        semaphore.signal() // Stay open for other waiters.
        return true
    }
}

extension Latch {
    /// Waits until opened (false after `timeout`), on a thread of its own: an async test that
    /// waits does not hold one of the few cooperative threads meanwhile.
    public func waitOffPool(for timeout: Duration = generousDeadline) async -> Bool {
        await withCheckedContinuation { continuation in
            do {
                try spawnThread { continuation.resume(returning: self.wait(for: timeout)) }
            } catch {
                continuation.resume(returning: false)
            }
        }
    }
}
