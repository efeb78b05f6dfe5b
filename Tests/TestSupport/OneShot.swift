import RunLoopKit

/// A value delivered once, from any thread, to one awaiting task.
public final class OneShot<Value: Sendable>: Sendable {
    public init() {}

    private let state = Lock<(value: Value?, waiter: CheckedContinuation<Value, Never>?)>((nil, nil))

    /// Delivers `value`; later deliveries are ignored.
    public func deliver(_ value: Value) {
        let waiter: CheckedContinuation<Value, Never>? = state.withLock { state in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    /// The delivered value, once it is.
    public var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let now: Value? = state.withLock { state in
                    if let value = state.value { return value }
                    state.waiter = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        }
    }
}
