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
    /// Creates the main loop's backend, when it differs from `make`'s (the GLib backend's waits
    /// on GLib's global default context for the main loop, on a fresh context otherwise); `nil`
    /// when `make` serves the main loop too.
    public let makeForMainLoop: (@Sendable () throws -> any Backend)?

    /// Creates a factory for `kind`; every backend `make` returns must report that kind (one
    /// that does not is refused with ``BackendError/kindMismatch(existing:requested:)``).
    public init(kind: BackendKind, make: @escaping @Sendable () throws -> any Backend) {
        self.kind = kind
        self.make = make
        self.makeForMainLoop = nil
    }

    /// Creates a factory for `kind` whose main loop's backend is made by `makeForMainLoop`, and
    /// every other loop's by `make` (called from any thread when the main loop is created off the
    /// main thread, so the choice cannot rest on the calling thread).
    public init(
        kind: BackendKind, make: @escaping @Sendable () throws -> any Backend,
        makeForMainLoop: @escaping @Sendable () throws -> any Backend
    ) {
        self.kind = kind
        self.make = make
        self.makeForMainLoop = makeForMainLoop
    }
}
