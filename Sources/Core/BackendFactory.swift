/// How to make a backend of one kind; `RunLoopKit` provides one per backend in the build.
public struct BackendFactory: Sendable {
    /// The kind of backend `make` returns.
    public let kind: BackendKind
    /// Creates a backend; throws ``BackendError/unavailable(_:_:)`` when it cannot start.
    public let make: @Sendable () throws -> any Backend

    /// Creates a factory for `kind`.
    public init(kind: BackendKind, make: @escaping @Sendable () throws -> any Backend) {
        self.kind = kind
        self.make = make
    }
}
