import NIOCore
import RunLoopKit
import RunLoopKitNIO
import Synchronization
import TestSupport
import Testing

/// The adapter as an `EventLoop`: where and in which order work runs, identity, executor.
@Suite("RunLoopKitNIO: a loop as an EventLoop")
struct EventLoopTests {
    @Test("execute runs every task on the loop's thread, in the order given", arguments: adapterBackends)
    func executeOrder(_ backend: BackendKind) async throws {
        try await withWorker(backend) { worker, eventLoop in
            let log = Lock<[(Int, Bool, Bool)]>([])
            for index in 0..<1_000 {
                eventLoop.execute {
                    log.withLock { $0.append((index, isOnThread(of: worker.loop), eventLoop.inEventLoop)) }
                }
            }
            let count = try value(of: eventLoop.submit { log.withLock { $0.count } })
            #expect(count == 1_000)
            let entries = log.withLock { $0 }
            #expect(entries.map(\.0) == Array(0..<1_000))
            #expect(entries.allSatisfy { $0.1 && $0.2 })
        }
    }

    @Test("submit returns the task's value or its error", arguments: adapterBackends)
    func submitResult(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            #expect(try value(of: eventLoop.submit { isOnThread(of: worker.loop) }))
            struct Refused: Error, Equatable {}
            let thrown = try outcome(of: eventLoop.submit { () throws -> Int in throw Refused() })
            #expect(throws: Refused()) { try thrown.get() }
        }
    }

    @Test("inEventLoop holds on the loop's thread only; the preconditions agree", arguments: adapterBackends)
    func inEventLoop(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            #expect(!eventLoop.inEventLoop)
            eventLoop.preconditionNotInEventLoop()
            let inside = try value(
                of: eventLoop.submit {
                    eventLoop.preconditionInEventLoop()
                    return eventLoop.inEventLoop
                })
            #expect(inside)
            // Another loop's thread does not hold this one.
            let other = try LoopThread(backend: backend)
            defer { other.stop() }
            #expect(try value(of: other.loop.eventLoop.submit { eventLoop.inEventLoop }) == false)
        }
    }

    @Test(
        "one adapter per loop: the same object from every thread, and hop(to:) lands on the loop's thread",
        arguments: adapterBackends)
    func identity(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            #expect(worker.loop.eventLoop === eventLoop)
            #expect(eventLoop.loop === worker.loop)
            #expect(eventLoop.next() === eventLoop)
            #expect(eventLoop.any() === eventLoop)
            #expect(Array(eventLoop.makeIterator()).map { $0 as AnyObject }.elementsEqual([eventLoop]) { $0 === $1 })
            // Asked for on the loop's own thread (as Loop.current), it is the same object.
            #expect(try value(of: eventLoop.submit { Loop.current.eventLoop === eventLoop }))
            // Another loop has another adapter.
            let other = try LoopThread(backend: backend)
            defer { other.stop() }
            #expect(other.loop.eventLoop !== eventLoop)
            // A future of the other loop hopped here completes on this loop's thread; hopping to
            // the loop it is already on returns the future itself (NIO compares with ===).
            let onOther = other.loop.eventLoop.submit { 7 }
            #expect(onOther.hop(to: other.loop.eventLoop) === onOther)
            let landed = onOther.hop(to: eventLoop).map { ($0, isOnThread(of: worker.loop)) }
            let (number, onThread) = try value(of: landed)
            #expect(number == 7)
            #expect(onThread)
        }
    }

    @Test("the executor is the loop itself; an actor on it runs on the loop's thread", arguments: adapterBackends)
    func executor(_ backend: BackendKind) async throws {
        let worker = try LoopThread(backend: backend)
        defer { worker.stop() }
        let eventLoop = worker.loop.eventLoop
        let executor = eventLoop.executor
        let isTheLoop = executor === worker.loop
        #expect(isTheLoop)
        let probe = ExecutorProbe(eventLoop: eventLoop)
        #expect(await probe.isOnLoopThread())
    }

    @Test(
        "shutdownGracefully fails with unsupportedOperation: the adapter does not own the loop",
        arguments: adapterBackends)
    func shutdownGracefully(_ backend: BackendKind) async throws {
        try await withWorker(backend) { (worker, eventLoop) throws in
            let reported = Lock<(any Error)?>(nil)
            let done = Latch()
            eventLoop.shutdownGracefully { error in
                reported.withLock { $0 = error }
                done.open()
            }
            #expect(done.wait(for: generousDeadline))
            #expect(reported.withLock { $0 as? EventLoopError } == .unsupportedOperation)
            #expect(throws: EventLoopError.unsupportedOperation) { try eventLoop.syncShutdownGracefully() }
            // The loop still serves.
            #expect(try value(of: eventLoop.submit { isOnThread(of: worker.loop) }))
        }
    }

    @Test(
        "work given through the adapter runs in the common modes: it waits out a nested run in another mode",
        arguments: adapterBackends)
    func commonModesOnly(_ backend: BackendKind) async throws {
        let trace = try await onLoopThread(backend) { loop -> [String] in
            let trace = Lock<[String]>([])
            let eventLoop = loop.eventLoop
            eventLoop.execute {
                trace.withLock {
                    $0.append(loop.currentMode == .default ? "executed in default" : "executed in another mode")
                }
            }
            let timer = try Loop.Timer(after: .milliseconds(1)) { _ in trace.withLock { $0.append("other's timer") }
            }
            loop.add(timer, to: "other")
            let other = loop.run("other", timeout: generousDeadline)
            trace.withLock { $0.append("other: \(other)") }
            let common = loop.run(timeout: generousDeadline)
            trace.withLock { $0.append("default: \(common)") }
            return trace.withLock { $0 }
        }
        try await offThePool {
            #expect(trace == ["other's timer", "other: finished", "executed in default", "default: finished"])
        }
    }
}

/// An actor isolated to an event loop's executor.
actor ExecutorProbe {
    let eventLoop: LoopEventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.executor.asUnownedSerialExecutor() }

    init(eventLoop: LoopEventLoop) { self.eventLoop = eventLoop }

    func isOnLoopThread() -> Bool { isOnThread(of: eventLoop.loop) && eventLoop.inEventLoop }
}
