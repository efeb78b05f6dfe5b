import Dispatch
import RunLoopKit
import Testing

extension BackendKind: Codable {}

/// SEMANTICS.md › Loop (run only on its own thread), Timer and Observer (one loop each).
///
/// Each misuse traps with a message that names it; an exit test runs it in a child process and
/// reads the message from its standard error.
@Suite("Misuse traps with a message")
struct MisuseTests {
    @Test("running a loop on another thread traps", arguments: backends)
    func runOnAnotherThread(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            let loop = try loopOnAnotherThread(backend)
            loop.run(timeout: .zero)
        }
        #expect(stderr(of: result).contains("a loop runs only on its own thread"))
    }

    @Test("adding a timer to a second loop traps", arguments: backends)
    func timerInTwoLoops(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            let timer = try Loop.Timer(after: .seconds(1)) { _ in }
            try loopOnAnotherThread(backend).add(timer, to: .default)
            try loopOnAnotherThread(backend).add(timer, to: .default)
        }
        #expect(stderr(of: result).contains("a timer can be added to one loop only"))
    }

    @Test("adding an observer to a second loop traps", arguments: backends)
    func observerInTwoLoops(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            let observer = Loop.Observer(activities: .entry) { _, _ in }
            try loopOnAnotherThread(backend).add(observer, to: .default)
            try loopOnAnotherThread(backend).add(observer, to: .default)
        }
        #expect(stderr(of: result).contains("an observer can be added to one loop only"))
    }
}

extension MisuseTests {
    @Test("running .common is reported once per process on standard error", arguments: backends)
    func commonReportedOnce(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [backend] in
            let own = try Loop.current(backend: backend)
            own.run(.common)
            own.run(.common)
        }
        let text = stderr(of: result)
        #expect(text.ranges(of: "Loop.run(.common) is a usage error").count == 1)
    }
}

private func stderr(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// A loop owned by a new thread that stays alive for the rest of the (child) process.
private func loopOnAnotherThread(_ backend: BackendKind) throws -> Loop {
    let made = DispatchSemaphore(value: 0)
    let loop = Ref<Loop>()
    try spawnThread {
        loop.value = try? Loop.current(backend: backend)
        made.signal()
        DispatchSemaphore(value: 0).wait()
    }
    made.wait()
    return loop.value!
}
