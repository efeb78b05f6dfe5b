import Synchronization

/// What the loop's callbacks saw, recorded on the loop's thread and read by the test once an
/// advance returned (an advance returns after the loop handled everything due on the way).
final class Recorder<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])

    func record(_ event: Event) {
        events.withLock { $0.append(event) }
    }

    var all: [Event] {
        events.withLock { $0 }
    }
}

/// A count kept across threads.
final class Counter: Sendable {
    private let count = Mutex(0)

    /// Adds one; returns the new count.
    func increment() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }

    var value: Int {
        count.withLock { $0 }
    }
}

/// A reference set after the closures that read it were made (a callback that needs the
/// object it is given to); weak, so that the object and its callbacks make no cycle and the
/// object still goes when the test lets it go.
final class Later<Value: AnyObject & Sendable>: Sendable {
    private struct Weak { weak var value: Value? }
    private let stored = Mutex(Weak())

    var value: Value? {
        get { stored.withLock { $0.value } }
        set { stored.withLock { $0.value = newValue } }
    }
}

/// SplitMix64: a tiny seeded generator, so that a test knows every number a retrier draws.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Duration {
    /// Whole nanoseconds (the durations here are far below 292 years).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
