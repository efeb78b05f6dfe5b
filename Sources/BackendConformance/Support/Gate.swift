import Dispatch
import RunLoopCore
import Synchronization

/// A one-shot gate: ``wait(for:)`` blocks (without spinning) until ``open()`` is called or
/// time runs out. Package-wide: the test targets' `Latch` is one.
package final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let opened = Atomic<Bool>(false)

    package init() {}

    /// Opens the gate; later calls have no effect. Safe from any thread.
    package func open() {
        if !opened.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }

    /// Whether the gate was opened.
    package var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Waits until opened; false if `limit` passed first.
    package func wait(for limit: Duration) -> Bool {
        guard semaphore.wait(timeout: .now() + .nanoseconds(Int(limit.nanosecondsRoundedUp))) == .success else {
            return false
        }
        semaphore.signal() // Stay open for other waiters.
        return true
    }
}

/// A counting handshake: each ``signal()`` lets one ``wait(for:)`` through.
final class Handshake: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    /// Lets one waiter through. Safe from any thread.
    func signal() { semaphore.signal() }

    /// Waits for one signal; false if `limit` passed first.
    func wait(for limit: Duration) -> Bool {
        semaphore.wait(timeout: .now() + .nanoseconds(Int(limit.nanosecondsRoundedUp))) == .success
    }
}
