import NIOCore
import RunLoopKit
import RunLoopKitNIO
import TestSupport
import Testing

/// The adapter's documented traps stop the process with a message naming the mistake, in debug and
/// release builds alike (rule X3; `scripts/test` runs this suite against a release build too).
@Suite("RunLoopKitNIO: misuse traps")
struct NIOMisuseTests {
    @Test("preconditionInEventLoop off the loop's thread traps, naming the loop", arguments: adapterBackends)
    func inEventLoopOffThread(_ backend: BackendKind) async throws {
        // An exit test's captures travel as Codable values: the backend as its name.
        let name = backend.name
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            [name = name as String] in
            let worker = try LoopThread(backend: try #require(BackendKind(rawValue: name)))
            worker.loop.eventLoop.preconditionInEventLoop()
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.contains("'s thread (its NIO event loop)"), "\(errors)")
        #expect(errors.contains("expected to run on Loop("), "\(errors)")
    }

    @Test("preconditionNotInEventLoop on the loop's thread traps, naming the loop", arguments: adapterBackends)
    func notInEventLoopOnThread(_ backend: BackendKind) async throws {
        let name = backend.name
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            [name = name as String] in
            let backend = try #require(BackendKind(rawValue: name))
            let thread = try TestThread {
                (try? Loop.current(backend: backend))?.eventLoop.preconditionNotInEventLoop()
            }
            thread.join()
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.contains("expected not to run on Loop("), "\(errors)")
    }
}
