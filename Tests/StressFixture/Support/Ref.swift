import RunLoopKit

/// A reference that a callback can read after it is set (for callbacks that need their item).
final class Ref<Value: Sendable>: Sendable {
    private let storage = Lock<Value?>(nil)
    var value: Value? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
