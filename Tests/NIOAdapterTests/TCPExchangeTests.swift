import NIOCore
import NIOPosix
import RunLoopKit
import RunLoopKitNIO
import Synchronization
import TestSupport
import Testing

/// A real SwiftNIO TCP exchange over 127.0.0.1 on a `MultiThreadedEventLoopGroup`, whose
/// futures hop to a RunLoopKit loop and complete there, in order.
@Suite("RunLoopKitNIO: a NIO TCP exchange delivered on a loop")
struct TCPExchangeTests {
    @Test("echoed lines hop to the loop and complete on its thread, in the order sent", arguments: adapterBackends)
    func exchange(_ backend: BackendKind) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let worker = try LoopThread(backend: backend)
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EchoHandler()) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        let client = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(LineDecoder()), LineCollector())
                }
            }
            .connect(host: "127.0.0.1", port: port).get()

        let eventLoop = worker.loop.eventLoop
        let delivered = Lock<[(String, Bool)]>([])
        let lines = (0..<50).map { "line \($0)" }
        var landed: [EventLoopFuture<Void>] = []
        for line in lines {
            let reply = try await LineCollector.request(line, on: client)
            // Each reply is completed on the client's NIO loop, then hops to the RunLoopKit loop.
            landed.append(
                reply.hop(to: eventLoop).map { echoed in
                    delivered.withLock { $0.append((echoed, isOnThread(of: worker.loop) && eventLoop.inEventLoop)) }
                })
        }
        let all = EventLoopFuture.andAllSucceed(landed, on: eventLoop)
        let completedOnLoop = try await all.map { isOnThread(of: worker.loop) }.get()

        #expect(completedOnLoop)
        let received = delivered.withLock { $0 }
        #expect(received.map(\.0) == lines)
        let allOnLoopThread = received.allSatisfy { $0.1 }
        #expect(allOnLoopThread)

        try await client.close()
        try await server.close()
        try await group.shutdownGracefully()
        worker.stop()
    }
}

/// Writes back whatever it reads.
final class EchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }
}

/// Splits the byte stream into lines (without their newline).
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = String

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return .needMoreData }
        let length = newline - buffer.readerIndex
        let line = buffer.readString(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }
}

/// Completes one promise per line received, in order: the reply to each request.
final class LineCollector: ChannelInboundHandler {
    typealias InboundIn = String

    private var waiting: [EventLoopPromise<String>] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        precondition(!waiting.isEmpty, "LineCollector: a line no request waits for: \(line)")
        waiting.removeFirst().succeed(line)
    }

    /// Sends `line` and returns the future of its echo (completed on the channel's loop).
    static func request(_ line: String, on channel: any Channel) async throws -> EventLoopFuture<String> {
        try await channel.eventLoop.submit {
            let collector = try channel.pipeline.syncOperations.handler(type: LineCollector.self)
            let promise = channel.eventLoop.makePromise(of: String.self)
            collector.waiting.append(promise)
            channel.writeAndFlush(ByteBuffer(string: line + "\n"), promise: nil)
            return promise.futureResult
        }.get()
    }
}
