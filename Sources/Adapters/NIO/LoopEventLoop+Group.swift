import Dispatch
import NIOCore

extension LoopEventLoop {
    /// This event loop: as an `EventLoopGroup`, an event loop is a group of one.
    public func next() -> any EventLoop { self }

    /// This event loop.
    public func any() -> any EventLoop { self }

    /// An iterator over this one event loop.
    public func makeIterator() -> EventLoopIterator { EventLoopIterator([self]) }

    /// Calls `callback` on `queue` with `EventLoopError.unsupportedOperation`: the adapter does
    /// not own the loop, so it cannot shut it down.
    ///
    /// The loop lives as long as its thread does; end it the way it was started (`LoopThread.stop()`,
    /// or returning from the thread's run). As with an event loop of NIO's
    /// `MultiThreadedEventLoopGroup`, which fails the same way, shut down its owner instead.
    public func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable (Error?) -> Void) {
        queue.async { callback(EventLoopError.unsupportedOperation) }
    }
}
