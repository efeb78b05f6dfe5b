import Glibc
import RunLoopKit
import TestSupport
import Testing

/// `LoopBound` and `LoopBoundBox`: loop-thread-only state captured by `@Sendable` handlers.
@Suite("Loop-bound state")
struct LoopBoundTests {
    @Test("a LoopBoundBox is shared by the handlers that capture it, on the loop's thread", arguments: backends)
    func boxSharedByHandlers(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let loop = worker.loop
            let log = try await within(generousDeadline) {
                try await worker.submit { LoopBoundBox([String](), loop: loop) }
            }
            let fired = Latch()
            let timer = try Loop.Timer(after: .milliseconds(1)) { _ in
                log.withValue { $0.append("timer") }
                fired.open()
            }
            for index in 0..<3 {
                loop.perform {
                    log.value.append("block \(index)")
                    // Added by the last block: the timer's handler follows every block's.
                    if index == 2 { loop.add(timer, to: .default) }
                }
            }
            #expect(await fired.waitOffPool(for: generousDeadline))
            let logged = try await within(generousDeadline) { try await worker.submit { log.value } }
            #expect(logged == ["block 0", "block 1", "block 2", "timer"])
        }
    }

    @Test("a LoopBound carries a value that is not Sendable; a box made elsewhere is handed over", arguments: backends)
    func boundValue(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(backend: backend)) { worker in
            let loop = worker.loop
            let bound = try await within(generousDeadline) {
                try await worker.submit {
                    let tally = Tally()
                    tally.count = 5
                    return LoopBound(tally, loop: loop)
                }
            }
            #expect(try await within(generousDeadline) { try await worker.submit { bound.value.count } } == 5)
            let box = LoopBoundBox.makeSending(Tally(), loop: loop)
            #expect(box.loop === loop)
            try await within(generousDeadline) { try await worker.submit { box.value.count += 2 } }
            #expect(try await within(generousDeadline) { try await worker.submit { box.value.count } } == 2)
        }
    }
}

extension MisuseTests {
    @Test("a LoopBoundBox touched off its loop's thread traps, naming both threads", arguments: backends)
    func loopBoundBoxOffThread(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let worker = try LoopThread(name: "bound-owner", backend: backend)
            let box = LoopBoundBox.makeSending(0, loop: worker.loop)
            try TestThread(name: "intruder") { _ = box.value }.join()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("LoopBoundBox.value (Int) touched on thread \"intruder\" (tid "))
        #expect(message.contains("but only Loop(\(backend))'s thread, thread \"bound-owner\" (tid "))
    }

    @Test("a LoopBound made off its loop's thread traps, naming both threads", arguments: backends)
    func loopBoundInitOffThread(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let worker = try LoopThread(name: "bound-owner", backend: backend)
            try TestThread(name: "intruder") { _ = LoopBound([1], loop: worker.loop) }.join()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("LoopBound.init(_:loop:) (Array<Int>) touched on thread \"intruder\" (tid "))
        #expect(message.contains("thread \"bound-owner\" (tid "))
    }
}
