import RunLoopKit

/// What a loop's callouts saw, in order: appended on the loop's thread, read by the test once
/// the loop has handled it (after an advance or a run returned).
public final class EventRecord: Sendable {
    private let entries = Lock<[String]>([])

    public init() {}

    /// Appends `entry`. Safe from any thread.
    public func append(_ entry: String) { entries.withLock { $0.append(entry) } }

    /// Every entry so far, in the order appended.
    public var all: [String] { entries.withLock { $0 } }
}
