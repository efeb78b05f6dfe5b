import Dispatch
import Glibc
import InMemoryLogging
import Logging
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// `Loop.logger` is replaced from any thread while a loop reports: every report reaches exactly
/// one of the loggers that were installed, none is lost or doubled (the race window is the
/// read of the logger at each report against a write from another thread).
@Suite("Logging: replacing Loop.logger while a loop reports")
struct LoggingStressTests {
    @Test("loggers swapped from several threads while a loop reports: every report lands once", arguments: backends)
    func swapWhileReporting(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let reports = scaled(2_000, minimum: 50)
            let handlers = [InMemoryLogHandler(), InMemoryLogHandler()]
            let loggers = handlers.map { handler in Logger(label: "runloopkit", factory: { _ in handler }) }
            Loop.logger = loggers[0]
            let reporting = Atomic<Bool>(true)
            let swapsDone = DispatchSemaphore(value: 0)
            let swappers = 3
            for index in 0..<swappers {
                _ = try TestThread {
                    var next = index % 2
                    while reporting.load(ordering: .acquiring) {
                        Loop.logger = loggers[next]
                        // A read races the writes as well.
                        _ = Loop.logger.logLevel
                        next = 1 - next
                    }
                    swapsDone.signal()
                }
            }
            let reported = DispatchSemaphore(value: 0)
            _ = try TestThread {
                let loop = try! Loop.current(backend: backend)
                for _ in 0..<reports {
                    let pipe = try! Pipe()
                    let source = try! Loop.Source(fileDescriptor: pipe.readEnd) { _ in }
                    pipe.close()
                    loop.add(source, to: .default)
                    loop.run(timeout: .zero)
                }
                reported.signal()
            }
            let finished = reported.wait(timeout: .now() + .seconds(Int(generousDeadline.components.seconds) * 4))
            reporting.store(false, ordering: .releasing)
            for _ in 0..<swappers { swapsDone.wait() }
            let counts = handlers.map { $0.entries.filter { $0.metadata["report"] == "descriptor-closed" }.count }
            guard finished == .success, counts.reduce(0, +) == reports else {
                writeToStandardError("FAILED: finished \(finished == .success), records \(counts) of \(reports)\n")
                exit(1)
            }
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!errors.contains("FAILED"), "\(errors)")
    }
}
