import RunLoopKit
import RunLoopKitBackendConformance

/// A non-blocking pipe whose ends the test closes when done: the conformance kit's pipe.
public final class Pipe: Sendable {
    private let pipe: KitPipe

    public var readEnd: Int32 { pipe.readEnd }
    public var writeEnd: Int32 { pipe.writeEnd }

    public init() throws { pipe = try KitPipe() }

    /// Writes `count` bytes.
    public func fill(_ count: Int = 1) { pipe.fill(count) }

    /// Reads whatever is there; returns how many bytes.
    @discardableResult
    public func drain() -> Int { pipe.drain() }

    public func close() { pipe.close() }
}

/// Runs `body` with a new pipe, and closes it when `body` returns.
@discardableResult
public func withPipe<T>(_ body: (Pipe) async throws -> T) async throws -> T {
    let pipe = try Pipe()
    defer { pipe.close() }
    return try await body(pipe)
}
