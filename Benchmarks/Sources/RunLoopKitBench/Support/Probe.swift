import CBenchSupport
import Dispatch
import Synchronization

/// Where the measured side leaves its timestamp for the driver.
///
/// The loop thread calls `mark()`, which stores t1 (release ordering) and, for a blocking
/// probe only, signals a semaphore. A spinning driver clears the stamp with `arm()` before it
/// posts and spins in `spin()` until the stamp is set; a blocking driver waits in `wait()` (a
/// futex). The first `mark()` also records the loop thread's kernel id, so that the driver can
/// check the loop is asleep before it posts (see `WakeDriver`).
final class Probe: Sendable {
    private let stamp = Atomic<UInt64>(0)
    private let semaphore = DispatchSemaphore(value: 0)
    private let markThread = Atomic<Int32>(0)
    /// Whether `mark()` signals the semaphore (the blocking driver) or only stores (spinning).
    let blocking: Bool

    init(blocking: Bool = true) { self.blocking = blocking }

    /// Records now (and wakes a blocking driver). Called on the loop thread.
    @inline(__always)
    func mark() {
        // The thread id first, so that the stamp's release publishes it.
        if markThread.load(ordering: .relaxed) == 0 { markThread.store(bench_gettid(), ordering: .relaxed) }
        stamp.store(Time.now(), ordering: .releasing)
        if blocking { semaphore.signal() }
    }

    /// The kernel id of the thread that marked first (0 before any mark).
    var loopThread: Int32 { markThread.load(ordering: .relaxed) }

    /// Signals completion without a timestamp.
    func signal() { semaphore.signal() }

    /// Waits for the next `mark()` and returns its timestamp (blocking probe).
    func wait() -> UInt64 {
        semaphore.wait()
        return stamp.load(ordering: .acquiring)
    }

    /// Waits at most `seconds`; false on timeout.
    func wait(seconds: Double) -> Bool {
        semaphore.wait(timeout: .now() + seconds) == .success
    }

    /// Clears the stamp before a post (spinning probe).
    @inline(__always)
    func arm() { stamp.store(0, ordering: .relaxed) }

    /// Spins (with a CPU pause each turn) until `mark()` stored a stamp; nil after `limit`
    /// nanoseconds without one, so that a lost wake ends the scenario instead of hanging it.
    @inline(__always)
    func spin(limit: UInt64 = 10_000_000_000) -> UInt64? {
        var turns: UInt32 = 0
        var start: UInt64 = 0
        while true {
            let value = stamp.load(ordering: .acquiring)
            if value != 0 { return value }
            bench_cpu_relax()
            turns &+= 1
            if turns & 0xFFFF == 0 {
                let now = Time.now()
                if start == 0 { start = now } else if now - start > limit { return nil }
            }
        }
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

    /// The value, or `nil` when none was put within `seconds`.
    func take(within seconds: Double) -> Value? {
        guard semaphore.wait(timeout: .now() + seconds) == .success else { return nil }
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

/// A flag one thread raises and another reads (a one-way signal between threads).
final class Signal: Sendable {
    private let value = Atomic<Bool>(false)
    func raise() { value.store(true, ordering: .releasing) }
    var isRaised: Bool { value.load(ordering: .acquiring) }
}
