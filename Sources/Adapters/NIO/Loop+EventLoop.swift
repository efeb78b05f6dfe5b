import RunLoopKit

extension Loop {
    /// The loop as a SwiftNIO `EventLoop`: the same object every time, while any reference to it
    /// lives. Safe to call from any thread.
    ///
    /// NIO tells event loops apart by identity (`future.hop(to:)` compares with `===`), so a
    /// loop has one adapter. The loop holds it weakly and the adapter holds the loop strongly:
    /// no cycle, and the adapter's work never pays for a weak load. Once no one holds the
    /// adapter, the next call makes a new one; no reference to the old one is left to compare.
    public var eventLoop: LoopEventLoop {
        attachment(ObjectIdentifier(LoopEventLoop.self)) { LoopEventLoop(loop: self) }
    }
}
