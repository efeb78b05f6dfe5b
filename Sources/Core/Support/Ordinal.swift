import Synchronization

/// Process-wide increasing numbers: the "when" of "ties by when they were added / first
/// signalled", and registration tokens. Never zero.
enum Ordinal {
    private static let counter = Atomic<UInt64>(0)

    /// The next number; strictly greater than every number handed out before.
    static func next() -> UInt64 {
        counter.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
