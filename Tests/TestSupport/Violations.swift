import RunLoopKit

/// Broken promises seen by any thread: counted, the first few kept verbatim.
public final class Violations: Sendable {
    private let kept = Lock<(first: [String], count: Int)>(([], 0))

    public init() {}

    public func record(_ what: String) {
        kept.withLock { kept in
            kept.count += 1
            if kept.first.count < 20 { kept.first.append(what) }
        }
    }

    public var count: Int { kept.withLock { $0.count } }
    public var first: [String] { kept.withLock { $0.first } }
}
