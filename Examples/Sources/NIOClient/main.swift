// A SwiftNIO client whose results land on the main loop.
//
// A NIO library hands back `EventLoopFuture`s completed on its own event loop threads.
// `future.hop(to: Loop.main.eventLoop)` (RunLoopKitNIO) delivers each one on the main thread,
// as a block of the main loop in its common modes, so the code that uses the result runs where
// the program's other main-loop work does. Here a tiny line server (upper-casing what it reads)
// and its client run on a NIO `MultiThreadedEventLoopGroup` over 127.0.0.1; the main thread
// runs `Loop.main` and prints each reply as it lands, in the order sent.
//
//   swift run --package-path Examples nio-client
import Glibc
import NIOCore
import NIOPosix
import RunLoopKit
import RunLoopKitNIO
import Synchronization

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let main = Loop.main
let mainEventLoop = main.eventLoop

let server = try ServerBootstrap(group: group)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(LineDecoder()), UpperCaser())
        }
    }
    .bind(host: "127.0.0.1", port: 0).wait()
guard let port = server.localAddress?.port else { fatalError("nio-client: the server has no port") }

let client = try ClientBootstrap(group: group)
    .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(LineDecoder()), Replies())
        }
    }
    .connect(host: "127.0.0.1", port: port).wait()
print("connected to 127.0.0.1:\(port); the main loop prints each reply")

let lines = ["hello", "from a NIO client", "on the main loop"]
let received = Mutex<[String]>([])
// Every reply hops to the main loop; the last one there ends the run.
let replies = lines.map { line in
    Replies.request(line, on: client).hop(to: mainEventLoop).map { reply in
        let onMain = main.eventLoop.inEventLoop && Loop.currentIfCreated === main
        print("  \(line) -> \(reply)\(onMain ? "" : " (NOT on the main thread)")")
        received.withLock { $0.append(onMain ? reply : "off the main thread") }
    }
}
EventLoopFuture.andAllComplete(replies, on: mainEventLoop).whenComplete { _ in main.stop() }

// Nothing else keeps `.default` alive while the replies are on their way: a source that is
// never signalled does.
let keepAlive = Loop.Source {}
main.add(keepAlive, to: .default)
let result = main.run(timeout: .seconds(30))
keepAlive.invalidate()

try client.close().wait()
try server.close().wait()
try group.syncShutdownGracefully()

let expected = lines.map { $0.uppercased() }
guard result == .stopped, received.withLock({ $0 }) == expected else {
    print("nio-client: expected \(expected) on the main thread, in order; got \(received.withLock { $0 }) (\(result))")
    exit(1)
}
print("done: \(lines.count) replies landed on the main loop, in order")

/// Splits the byte stream into lines (without their newline).
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = String

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return .needMoreData }
        let line = buffer.readString(length: newline - buffer.readerIndex)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }
}

/// The server: answers each line with the line upper-cased.
final class UpperCaser: ChannelInboundHandler, Sendable {
    typealias InboundIn = String
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: line.uppercased() + "\n")), promise: nil)
    }
}

/// The client: completes one promise per line received, in the order the requests went out.
final class Replies: ChannelInboundHandler {
    typealias InboundIn = String

    private var waiting: [EventLoopPromise<String>] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        guard !waiting.isEmpty else { return context.fireErrorCaught(UnexpectedReply(line: line)) }
        waiting.removeFirst().succeed(line)
    }

    /// Sends `line`; the future of its reply is completed on the channel's event loop.
    static func request(_ line: String, on channel: any Channel) -> EventLoopFuture<String> {
        channel.eventLoop.flatSubmit {
            let promise = channel.eventLoop.makePromise(of: String.self)
            do {
                try channel.pipeline.syncOperations.handler(type: Replies.self).waiting.append(promise)
            } catch {
                promise.fail(error)
            }
            channel.writeAndFlush(ByteBuffer(string: line + "\n"), promise: nil)
            return promise.futureResult
        }
    }
}

/// A line arrived that no request waits for.
struct UnexpectedReply: Error {
    let line: String
}
