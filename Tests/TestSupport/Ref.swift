import RunLoopKit

/// A reference a callback can read once it is set: for a value another thread hands back (a
/// thread's loop, a run's result), or for a callback that needs its item.
///
/// It holds its value strongly: for an item whose own callback refers to it, ``WeakRef`` avoids
/// the cycle.
public final class Ref<Value: Sendable>: Sendable {
    private let storage = Lock<Value?>(nil)

    public init() {}

    public var value: Value? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
