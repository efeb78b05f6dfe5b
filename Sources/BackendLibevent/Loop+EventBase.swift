#if Libevent
import RunLoopCore

extension Loop {
    /// Gives `body` the `event_base` of this libevent loop, for code that adds its own
    /// libevent events to the loop.
    ///
    /// The base is a `struct event_base *`; pass it to libevent's C API (`event_new`,
    /// `event_add`, …). Callbacks of the events you add run inside the loop's wait, on the
    /// loop's thread, whenever the loop runs (in any mode). A firing callback does not by
    /// itself make the loop run a pass: the loop goes back to waiting for its own work; a
    /// callback that has work for the loop hands it over with `perform(in:_:)`, which ends
    /// the wait. Your events do not keep a mode alive: a run in an empty mode still finishes
    /// at once. Those callbacks must not run the loop nor break out of the base's loop
    /// (`event_base_loopbreak`, `event_base_loopexit`).
    ///
    /// `body`, and the callbacks of your events, run while the loop holds the lock that
    /// guards its backend: a thread that removes or invalidates one of this loop's descriptor
    /// or port sources meanwhile waits until they return. They must never wait for such a
    /// thread, or both wait forever. The base is not thread-safe: touch it and your events on
    /// the loop's thread only (from other threads, hand work over with `perform(in:_:)`).
    /// Remove and free your events before the loop's thread exits: the base is freed then.
    ///
    /// Call it on the loop's own thread only; it traps elsewhere, and on a loop that is not
    /// built on `BackendKind.libevent`.
    ///
    /// - Parameter body: receives the base; its result is returned.
    /// - Returns: what `body` returns.
    public func withEventBase<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R {
        try withBackend { backend in
            guard let backend = backend as? LibeventBackend else {
                trap("Loop.withEventBase(_:) called on \(self), which is not a libevent loop")
            }
            return try body(backend.eventBase)
        }
    }
}
#endif
