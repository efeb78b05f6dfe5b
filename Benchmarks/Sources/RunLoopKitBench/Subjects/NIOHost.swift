import NIOCore
import NIOPosix

/// SwiftNIO's event loop: a `MultiThreadedEventLoopGroup` of one thread, as a NIO program
/// would make it. Work from other threads arrives by `execute`, timers by `scheduleTask`.
final class NIOHost: Sendable {
    let group: MultiThreadedEventLoopGroup
    let loop: any EventLoop

    init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
    }

    /// Runs `body` on the loop's thread and returns its value.
    func onLoop<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> Value {
        let handoff = Handoff<Value>()
        loop.execute { handoff.put(body()) }
        return handoff.take()
    }

    /// Shuts the group down and joins its thread.
    func stop() {
        try? group.syncShutdownGracefully()
    }
}
