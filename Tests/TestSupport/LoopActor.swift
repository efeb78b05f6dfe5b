import RunLoopKit

/// An actor whose executor is a given loop: what it runs, it runs on the loop's thread, one job at
/// a time. A test adds the methods it needs in an extension; ``count`` is the state they keep
/// (timer fires, visits).
public actor LoopActor {
    public let loop: Loop
    /// A count the test's methods keep.
    public var count = 0

    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    public init(_ loop: Loop) { self.loop = loop }
}
