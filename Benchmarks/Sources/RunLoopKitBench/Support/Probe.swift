import Dispatch
import Synchronization

/// Where the measured side leaves its timestamp and tells the driver it is done.
///
/// The loop thread stores `t1` and signals; the driver, blocked in the semaphore (a futex,
/// no spinning), reads it after waking. The store happens before the signal, so the driver
/// never reads a stale stamp.
final class Probe: Sendable {
    private let stamp = Atomic<UInt64>(0)
    private let semaphore = DispatchSemaphore(value: 0)

    /// Records now and wakes the driver. Called on the loop thread.
    @inline(__always)
    func mark() {
        stamp.store(Time.now(), ordering: .releasing)
        semaphore.signal()
    }

    /// Signals completion without a timestamp.
    func signal() { semaphore.signal() }

    /// Waits for the next `mark()` and returns its timestamp.
    func wait() -> UInt64 {
        semaphore.wait()
        return stamp.load(ordering: .acquiring)
    }

    /// Waits at most `seconds`; false on timeout.
    func wait(seconds: Double) -> Bool {
        semaphore.wait(timeout: .now() + seconds) == .success
    }
}

/// A one-shot hand-over of a value from one thread to another.
final class Handoff<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let semaphore = DispatchSemaphore(value: 0)

    func put(_ newValue: Value) {
        value.withLock { $0 = newValue }
        semaphore.signal()
    }

    func take() -> Value {
        semaphore.wait()
        return value.withLock { $0.take()! }
    }
}

/// State owned by one thread at a time, handed over through a semaphore or a thread join
/// (both of which order memory). That is why it can be `@unchecked Sendable`: it is never
/// touched by two threads concurrently, and the checker cannot see the hand-over.
final class Owned<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
