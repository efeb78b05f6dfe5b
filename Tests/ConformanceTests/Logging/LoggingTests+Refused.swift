import CTestSupport
import Glibc
import InMemoryLogging
import Logging
import RunLoopKit
import TestSupport
import Testing

/// A descriptor the backend refuses to watch: reported through `Loop.logger` as an error with
/// the backend's error attached, and its source invalidated; the same for the dispatch main
/// queue's descriptor on the main loop.
///
/// The kernel is made to refuse: in a child process (an exit test), the loop's thread installs a
/// seccomp filter that fails `epoll_ctl` with EPERM once its loop exists. The io_uring backend
/// does not ask the kernel when registering (a poll request is queued, and a descriptor it can
/// take is never refused), so it has no such report to check.
@Suite("Logging: a descriptor the backend refuses")
struct RefusedDescriptorLoggingTests {
    @Test(
        "a descriptor the backend refuses: an error record with the backend's error; the source is invalidated",
        arguments: backends.filter { $0.rawValue != "uring" })
    func refusedDescriptorRecord(_ backend: BackendKind) async throws {
        let result = await #expect(
            processExitsWith: .success, observing: [\.standardOutputContent, \.standardErrorContent]
        ) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let handler = InMemoryLogHandler()
            Loop.logger = Logger(label: "runloopkit", factory: { _ in handler })
            let thread = try TestThread {
                let loop = try! Loop.current(backend: backend)
                let pipe = try! Pipe()
                let source = try! Loop.Source(fileDescriptor: pipe.readEnd) { _ in }
                guard rlk_test_deny_syscall(rlk_test_sys_epoll_ctl, EPERM) == 0 else {
                    print("FAILED: seccomp: errno \(errno)")
                    return
                }
                loop.add(source, to: .default)
                loop.run(timeout: .zero)
                let operation = registrationOperation(backend)
                let entries = handler.entries
                let expected: Logger.Metadata = [
                    "report": "cannot-watch-descriptor", "loop": .string(loop.description),
                    "descriptor": "\(pipe.readEnd)", "source": .string(source.description),
                ]
                let prefix = "cannot watch descriptor \(pipe.readEnd): "
                let suffix = "; \(source) is invalidated"
                if entries.count != 1 || entries[0].level != .error || entries[0].metadata != expected
                    || !entries[0].message.description.hasPrefix(prefix)
                    || !entries[0].message.description.hasSuffix(suffix)
                    || (entries[0].error as? SystemError) != SystemError(operation, errno: EPERM) || source.isValid
                {
                    print("FAILED: records \(entries); source valid \(source.isValid)")
                }
            }
            guard thread.join() else {
                print("FAILED: the loop's thread did not finish")
                return
            }
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(result != nil && !output.contains("FAILED"), "\(output)\n\(errors)")
    }

    /// The main loop runs in a program of its own (`MainLoopFixture`, scenario
    /// `main-queue-refused`): its thread denies `epoll_ctl` once the loop exists, then runs a
    /// pass in the default mode, where the loop watches the dispatch main queue.
    @Test(
        "the dispatch main queue the backend refuses to watch: an error record with the backend's error",
        arguments: backends.filter { $0.rawValue != "uring" })
    func refusedMainQueueRecord(_ backend: BackendKind) async throws {
        let lines = try await runMainLoopFixture(backend, "main-queue-refused")
        let error = SystemError(registrationOperation(backend), errno: EPERM)
        try #require(lines.count == 4, "\(lines)")
        #expect(lines[0] == "record error cannot watch the dispatch main queue: \(error)")
        // The descriptor is the dispatch main queue's eventfd, whatever its number.
        let metadata = lines[1].split(separator: ";")
        #expect(metadata.count == 3, "\(lines[1])")
        #expect(metadata.first?.hasPrefix("metadata descriptor=") == true, "\(lines[1])")
        #expect(Int32(metadata.first?.split(separator: "=").last ?? "") != nil, "\(lines[1])")
        #expect(Array(metadata.dropFirst()) == ["loop=Loop(\(backend), main)", "report=cannot-watch-main-queue"])
        #expect(lines[2] == "error \(error)")
        #expect(lines[3] == "run: timedOut")
    }
}
