import RunLoopKit

/// A weak reference a callback can read once it is set: for a callback that needs the item it
/// belongs to (a source that invalidates or signals itself).
///
/// A strong reference there is a cycle — item, callback, reference, item — that outlives the
/// test together with everything the callback holds (its loop, when it stops it): the items and
/// loops of a whole test run that LeakSanitizer reports at exit. The weak one lets the item go
/// when its last owner (the test or a mode of its loop) does.
public final class WeakRef<Object: AnyObject & Sendable>: Sendable {
    private struct Box: Sendable {
        weak var object: Object?
    }

    private let storage = Lock<Box>(Box())

    public init() {}

    public var value: Object? {
        get { storage.withLock { $0.object } }
        set { storage.withLock { $0.object = newValue } }
    }
}
