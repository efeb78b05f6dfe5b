import CTestSupport
import Glibc
import InMemoryLogging
import Logging
import RunLoopKit
import TestSupport
import Testing

/// A descriptor the backend refuses to watch: reported through `Loop.logger` as an error with
/// the backend's error attached, and its source invalidated.
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
            let handler = InMemoryLogHandler()
            Loop.logger = Logger(label: "runloopkit", factory: { _ in handler })
            let thread = try JoinableThread {
                let loop = try! Loop.current(backend: backend)
                let pipe = try! Pipe()
                let source = try! Loop.Source(fileDescriptor: pipe.readEnd) { _ in }
                guard rlk_test_deny_syscall(rlk_test_sys_epoll_ctl, EPERM) == 0 else {
                    print("FAILED: seccomp: errno \(errno)")
                    return
                }
                loop.add(source, to: .default)
                loop.run(timeout: .zero)
                let operation = backend.rawValue == "epoll" ? "epoll_ctl" : "event_add"
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
}
