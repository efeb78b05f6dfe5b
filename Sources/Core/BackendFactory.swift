/// How to make a backend of one kind: what Core needs to create a loop.
///
/// `RunLoopKit` provides one per built-in backend (`BackendKind.factory`). For a backend
/// written outside RunLoopKit, make one with its kind and initializer, and create loops with
/// it through ``Loop/current(creatingWith:)``, ``Loop/main(creatingWith:)`` or
/// `LoopThread(name:backend:)`:
///
/// ```swift
/// let factory = BackendFactory(kind: BackendKind(name: "poll")) { try PollBackend() }
/// let thread = try LoopThread(name: "poller", backend: factory)
/// ```
public struct BackendFactory: Sendable {
    /// The kind of backend `make` returns.
    public let kind: BackendKind
    /// Creates a backend; throws ``BackendError/unavailable(_:_:)`` when it cannot start. Called
    /// once per loop, on the thread that creates the loop (any thread, for the main loop).
    public let make: @Sendable () throws -> any Backend

    /// Creates a factory for `kind`; every backend `make` returns must report that kind (one
    /// that does not is refused with ``BackendError/kindMismatch(existing:requested:)``).
    public init(kind: BackendKind, make: @escaping @Sendable () throws -> any Backend) {
        self.kind = kind
        self.make = make
    }
}
