import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › L1: One loop per
/// thread; L2: The main loop; L5: Torn down with its thread.
@Suite("One loop per thread")
struct ThreadTests {
    @Test("a thread's loop is created once and is its own", arguments: backends)
    func onePerThread(_ backend: BackendKind) async throws {
        let first = try await onLoopThread(backend) { loop in
            let again = try Loop.current(backend: backend)
            #expect(again === loop)
            #expect(Loop.current === loop)
            #expect(Loop.currentIfCreated === loop)
            #expect(loop.backend == backend)
            #expect(!loop.isMain)
            return loop
        }
        let second = try await onLoopThread(backend) { $0 }
        #expect(first !== second)
    }

    @Test("asking for a thread's loop with another backend is an error naming both", arguments: backends)
    func kindMismatch(_ backend: BackendKind) async throws {
        let others = BackendKind.allCases.filter { $0 != backend }
        try await onLoopThread(backend) { _ in
            for other in others {
                #expect(throws: BackendError.kindMismatch(existing: backend, requested: other)) {
                    try Loop.current(backend: other)
                }
            }
        }
    }

    @Test(
        "the main loop is one loop, reachable from any thread, and is not a worker thread's loop", arguments: backends)
    func mainFromAnyThread(_ backend: BackendKind) async throws {
        let fromWorker = try await onLoopThread(backend) { loop in
            #expect(Loop.main !== loop)
            return ObjectIdentifier(Loop.main)
        }
        #expect(fromWorker == ObjectIdentifier(Loop.main))
        #expect(Loop.main.isMain)
    }

    @Test(
        "a loop is torn down when its thread exits: sources are cancelled, timers and observers invalidated",
        arguments: backends)
    func tornDownAtThreadExit(_ backend: BackendKind) async throws {
        let trace = Trace()
        let exited = Latch()
        let source = Loop.Source(
            cancel: { _, mode in
                trace("cancel \(mode)")
                exited.open()
            }, perform: {})
        let timer = try Loop.Timer(after: .seconds(3600)) { _ in }
        let observer = Loop.Observer(activities: .entry) { _, _ in }
        let loopBox = Lock<Loop?>(nil)
        let failure = Lock<String?>(nil)
        _ = try TestThread {
            let loop: Loop
            do {
                loop = try Loop.current(backend: backend)
            } catch {
                failure.withLock { $0 = "the loop could not be created: \(error)" }
                exited.open()
                return
            }
            loop.add(source, to: .default)
            loop.add(timer, to: .default)
            loop.add(observer, to: .default)
            loopBox.withLock { $0 = loop }
        }
        #expect(exited.wait())
        if let failure = failure.withLock({ $0 }) { Issue.record(Comment(rawValue: failure)) }
        #expect(trace.all == ["cancel \(Loop.Mode.default)"])
        #expect(source.isValid) // A source may live on in other loops.
        #expect(!timer.isValid)
        #expect(!observer.isValid)
        let loop = try #require(loopBox.withLock { $0 })
        #expect(!loop.contains(source, in: .default))
        // A torn-down loop accepts nothing more.
        loop.perform {}
        loop.add(source, to: .default)
        #expect(!loop.contains(source, in: .default))
    }
}
