/// The port was closed (``Loop/Port/close()``) before the message could be queued.
///
/// Thrown by ``Loop/Port/sendWaitingForRoom(_:)``, to a sender that found the port closed or
/// was waiting for room when it closed; its message was not queued.
public struct PortClosedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Creates the error.
    public init() {}

    /// Says what happened, in a sentence.
    public var description: String { "the port was closed; the message was not queued" }
}
