import Synchronization

/// One integer many threads read and write.
public final class AtomicInt: Sendable {
    private let storage: Atomic<Int>
    public init(_ value: Int = 0) { storage = Atomic(value) }
    public var value: Int { storage.load(ordering: .sequentiallyConsistent) }
    public func store(_ value: Int) { storage.store(value, ordering: .sequentiallyConsistent) }
    @discardableResult
    public func increment() -> Int { storage.add(1, ordering: .sequentiallyConsistent).newValue }
}
