import NIOCore
import NIOPosix
import RunLoopKit
import RunLoopKitNIO
import TestSupport
import Testing

/// SwiftNIO's documented `EventLoopFuture` contract, on a loop's adapter: callbacks run on the
/// future's event loop, in the order they were added; combinators keep their inputs' order; a
/// hop lands on the loop it names.
@Suite("RunLoopKitNIO: futures and promises by NIO's contract")
struct FutureContractTests {
    @Test(
        "a promise completed from another thread calls back on the loop's thread, in the order the callbacks were added",
        arguments: adapterBackends)
    func promiseCallbacks(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            let promise = eventLoop.makePromise(of: Int.self)
            let log = Lock<[String]>([])
            for index in 0..<5 {
                promise.futureResult.whenSuccess { value in
                    log.withLock { $0.append("\(index): \(value) on loop \(isOnThread(of: worker.loop))") }
                }
            }
            promise.succeed(3)
            _ = try value(of: promise.futureResult.map { _ in () })
            #expect(log.withLock { $0 } == (0..<5).map { "\($0): 3 on loop true" })
            // A callback added once the future has completed runs too, on the loop's thread.
            let late = try value(of: promise.futureResult.map { ($0, isOnThread(of: worker.loop)) })
            #expect(late == (3, true))
        }
    }

    @Test("map, flatMap, flatMapThrowing and recover chain on the loop's thread", arguments: adapterBackends)
    func chains(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            struct Refused: Error {}
            let onLoop: @Sendable () -> Bool = { isOnThread(of: worker.loop) }
            let chained = eventLoop.submit { 2 }
                .map { ($0 * 10, onLoop()) }
                .flatMap { value, first in eventLoop.submit { (value + 1, first && onLoop()) } }
                .flatMapThrowing { (value, all) throws -> (Int, Bool) in
                    guard value == 21 else { throw Refused() }
                    return (value, all && onLoop())
                }
            #expect(try value(of: chained) == (21, true))
            let recovered = (eventLoop.makeFailedFuture(Refused()) as EventLoopFuture<Int>)
                .flatMapErrorThrowing { _ in 5 }
                .map { ($0, onLoop()) }
            #expect(try value(of: recovered) == (5, true))
        }
    }

    @Test(
        "and, whenAllSucceed, whenAllComplete, fold and reduce keep their inputs' order",
        arguments: adapterBackends)
    func combinators(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            struct Refused: Error {}
            // Completed in reverse order, from another thread.
            let promises = (0..<5).map { _ in eventLoop.makePromise(of: Int.self) }
            let futures = promises.map(\.futureResult)
            let all = EventLoopFuture.whenAllSucceed(futures, on: eventLoop)
            let folded = futures[0].fold(Array(futures.dropFirst())) { sum, next in
                eventLoop.makeSucceededFuture(sum * 10 + next)
            }
            let reduced = EventLoopFuture.reduce(into: [Int](), futures, on: eventLoop) { $0.append($1) }
            let pair = futures[1].and(futures[3])
            for (index, promise) in promises.enumerated().reversed() { promise.succeed(index) }
            #expect(try value(of: all) == [0, 1, 2, 3, 4])
            #expect(try value(of: folded) == 1_234)
            #expect(try value(of: reduced) == [0, 1, 2, 3, 4])
            #expect(try value(of: pair) == (1, 3))
            // One failure: whenAllSucceed fails, whenAllComplete reports each in place.
            let mixed = [
                eventLoop.makeSucceededFuture(1), eventLoop.makeFailedFuture(Refused()),
                eventLoop.submit { 3 },
            ]
            #expect(throws: Refused.self) { try value(of: EventLoopFuture.whenAllSucceed(mixed, on: eventLoop)) }
            let results = try value(of: EventLoopFuture.whenAllComplete(mixed, on: eventLoop))
            #expect(results.map { (try? $0.get()) ?? -1 } == [1, -1, 3])
        }
    }

    @Test(
        "futures hop between a RunLoopKit loop and a MultiThreadedEventLoopGroup loop, each step on its loop's thread",
        arguments: adapterBackends)
    func mixedGroup(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, _) throws in
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            defer { try? group.syncShutdownGracefully() }
            let nio = group.next()
            let ours = worker.loop.eventLoop
            var trace: [String] = []
            var future = ours.makeSucceededFuture(trace)
            for step in 0..<20 {
                let target: any EventLoop = step.isMultiple(of: 2) ? nio : ours
                future = future.hop(to: target).map { steps in
                    let place =
                        nio.inEventLoop ? "nio" : (isOnThread(of: worker.loop) && ours.inEventLoop ? "ours" : "?")
                    return steps + ["\(step) on \(place)"]
                }
            }
            trace = try value(of: future)
            #expect(trace == (0..<20).map { "\($0) on \($0.isMultiple(of: 2) ? "nio" : "ours")" })
            // A NIO promise completed on our loop, and ours completed on NIO's, call back on their
            // own loops.
            let nioPromise = nio.makePromise(of: Bool.self)
            ours.execute { nioPromise.succeed(ours.inEventLoop) }
            #expect(try value(of: nioPromise.futureResult.map { ($0, nio.inEventLoop) }) == (true, true))
            let ourPromise = ours.makePromise(of: Bool.self)
            nio.execute { ourPromise.succeed(nio.inEventLoop) }
            #expect(try value(of: ourPromise.futureResult.map { ($0, ours.inEventLoop) }) == (true, true))
            // and() across the two loops completes on the first future's loop.
            let both = ours.submit { 1 }.and(nio.submit { 2 }).map { ($0, $1, ours.inEventLoop) }
            #expect(try value(of: both) == (1, 2, true))
        }
    }
}
