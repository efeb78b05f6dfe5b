import RunLoopKit

/// A source that keeps a mode alive without ever firing: a port nobody sends to.
public func keepAliveSource() throws -> (Loop.Source, Loop.Port<Int>) {
    let port = try Loop.Port<Int>()
    return (Loop.Source(port: port) { _ in }, port)
}
