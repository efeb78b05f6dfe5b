/// The error of a wait on a loop that ended first: its thread exited (and the loop was torn
/// down) before what was awaited happened.
public struct LoopEndedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The loop, as its `description` read (`Loop(epoll)`).
    public let loop: String

    /// What the error says: which loop ended.
    public var description: String { "\(loop) ended (its thread exited) before the wait was over" }
}
