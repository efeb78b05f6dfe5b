import Dispatch
import Glibc
import RunLoopKit
import TestSupport
import Testing

/// The embedding API's misuse traps with a message (contract L3: a loop runs on its own
/// thread only; a host drives it there). Each runs in a child process (an exit test).
@Suite("Embedding misuse traps with a message")
struct EmbeddingMisuseTests {
    @Test("prepareForHost on another thread traps", arguments: embeddableBackends)
    func prepareOffThread(_ backend: BackendKind) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            _ = try parkedLoop(backend).prepareForHost()
        }
        #expect(standardError(of: result).contains("Loop.prepareForHost(in:) called on a thread that is not"))
    }

    @Test("dispatchForHost on another thread traps", arguments: embeddableBackends)
    func dispatchOffThread(_ backend: BackendKind) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            try parkedLoop(backend).dispatchForHost()
        }
        #expect(standardError(of: result).contains("Loop.dispatchForHost() called on a thread that is not"))
    }

    @Test("dispatchForHost without a prepare traps", arguments: embeddableBackends)
    func dispatchWithoutPrepare(_ backend: BackendKind) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            try Loop.current(backend: backend).dispatchForHost()
        }
        #expect(standardError(of: result).contains("called without Loop.prepareForHost(in:) before it"))
    }
}

private func standardError(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// A loop owned by a new thread that stays parked for the rest of the (child) process.
private func parkedLoop(_ backend: BackendKind) throws -> Loop {
    let made = DispatchSemaphore(value: 0)
    let loop = Lock<Loop?>(nil)
    _ = try TestThread {
        loop.withLock { $0 = try? Loop.current(backend: backend) }
        made.signal()
        DispatchSemaphore(value: 0).wait()
    }
    made.wait()
    return loop.withLock { $0! }
}
