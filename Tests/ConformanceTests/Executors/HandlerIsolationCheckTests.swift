import Dispatch
import Glibc
import RunLoopCore
import RunLoopKit
import TestSupport
import Testing

/// Behaviour contract › X3: the check in front of every isolated handler (`HandlerIsolation`)
/// traps with its message when the handler is called off its actor — in release builds too,
/// where `preconditionIsolated` drops its message (`scripts/test` runs this suite against a
/// release build). No public call reaches the trap (a loop refuses a handler it cannot run when
/// it is added), so the tests call the checked handler directly, as a bug in the loop would.
@Suite("Isolated handlers: the check keeps its message")
struct HandlerIsolationCheckTests {
    @Test("a main-actor handler called off the main thread traps, naming the main actor")
    func mainActorOffMainThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let handler = HandlerIsolation(MainActor.shared).checked { () in }
            let done = DispatchSemaphore(value: 0)
            _ = try TestThread {
                handler()
                done.signal()
            }
            done.wait()
        }
        // The actor is named as Swift describes it (`Swift.MainActor`).
        #expect(
            text(of: result).contains("RunLoopKit: a handler isolated to Swift.MainActor was called off that actor"))
    }

    @Test("a handler isolated to a loop-backed actor called off the loop's thread traps", arguments: backends)
    func loopActorOffLoopThread(_ backend: BackendKind) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let worker = try LoopThread(backend: backend)
            let handler = HandlerIsolation(LoopActor(worker.loop)).checked { () in }
            handler() // On the child's test thread, not the loop's.
        }
        #expect(text(of: result).contains("was called off that actor"))
    }

    @Test("the same handler called on the loop's own thread runs", arguments: backends)
    func loopActorOnLoopThread(_ backend: BackendKind) async throws {
        let worker = try LoopThread(backend: backend)
        let ran = Latch()
        let handler = HandlerIsolation(LoopActor(worker.loop)).checked { () in ran.open() }
        worker.loop.perform { handler() }
        #expect(await ran.waitOffPool(for: hangDeadline), "the checked handler did not run on the loop's thread")
        await worker.finish()
    }
}

private func text(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}
