import Dispatch
import Glibc
import RunLoopKit
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › X1: Bad input
/// is refused — where it enters, with an error naming the argument and the value.
@Suite("Bad input is refused with an error naming argument and value")
struct BadInputTests {
    @Test("a negative descriptor", arguments: backends)
    func negativeDescriptor(_ backend: BackendKind) async throws {
        #expect(
            throws: ArgumentError(argument: "fileDescriptor", value: "-3", reason: "a descriptor must not be negative")
        ) {
            try Loop.Source(fileDescriptor: -3) { _ in }
        }
    }

    @Test("a closed descriptor", arguments: backends)
    func closedDescriptor(_ backend: BackendKind) async throws {
        let pipe = try Pipe()
        let fd = pipe.readEnd
        // Keep the number taken by something closed-on-exec we know is not a descriptor source:
        // close it and check at once; the error must name it.
        pipe.close()
        do {
            _ = try Loop.Source(fileDescriptor: fd) { _ in }
            // The number was reused by a parallel test in between: nothing to conclude.
        } catch {
            #expect(error.argument == "fileDescriptor")
            #expect(error.value == "\(fd)")
            #expect(error.reason.contains("not open"))
        }
        // A number far above any open descriptor is certainly closed.
        #expect(throws: ArgumentError.self) { try Loop.Source(fileDescriptor: 1_000_000) { _ in } }
    }

    @Test("a regular file (always ready, cannot be watched)", arguments: backends)
    func regularFile(_ backend: BackendKind) async throws {
        let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let error = #expect(throws: ArgumentError.self) { try Loop.Source(fileDescriptor: fd) { _ in } }
        #expect(error?.argument == "fileDescriptor")
        #expect(error?.value == "\(fd)")
    }

    @Test("an empty interest", arguments: backends)
    func emptyInterest(_ backend: BackendKind) async throws {
        let pipe = try Pipe()
        defer { pipe.close() }
        let error = #expect(throws: ArgumentError.self) {
            try Loop.Source(fileDescriptor: pipe.readEnd, interest: []) { _ in }
        }
        #expect(error?.argument == "interest")
        #expect(error?.value == "[]")
    }

    @Test("a negative or zero interval", arguments: backends)
    func badInterval(_ backend: BackendKind) async throws {
        let negative = #expect(throws: ArgumentError.self) {
            try Loop.Timer(fireAt: .now, interval: .zero - .seconds(1)) { _ in }
        }
        #expect(negative?.argument == "interval")
        #expect(negative?.value == "\(Duration.zero - .seconds(1))")
        let zero = #expect(throws: ArgumentError.self) { try Loop.Timer(fireAt: .now, interval: .zero) { _ in } }
        #expect(zero?.argument == "interval")
        #expect(zero?.value == "\(Duration.zero)")
        let repeating = #expect(throws: ArgumentError.self) {
            try Loop.Timer(after: .seconds(1), repeating: .zero) { _ in }
        }
        #expect(repeating?.argument == "repeating")
    }

    @Test("a negative tolerance, at creation and when changed", arguments: backends)
    func negativeTolerance(_ backend: BackendKind) async throws {
        let atCreation = #expect(throws: ArgumentError.self) {
            try Loop.Timer(after: .seconds(1), tolerance: .zero - .milliseconds(1)) { _ in }
        }
        #expect(atCreation?.argument == "tolerance")
        #expect(atCreation?.value == "\(Duration.zero - .milliseconds(1))")
        let timer = try Loop.Timer(after: .seconds(1)) { _ in }
        let changed = #expect(throws: ArgumentError.self) { try timer.setTolerance(.zero - .nanoseconds(1)) }
        #expect(changed?.argument == "tolerance")
        #expect(timer.tolerance == .zero)
    }

    @Test("an error's description names the argument and the value")
    func description() async throws {
        try await offThePool {
            let error = ArgumentError(
                argument: "fileDescriptor", value: "-1", reason: "a descriptor must not be negative")
            #expect(error.description == "fileDescriptor -1: a descriptor must not be negative")
        }
    }
}

/// More refusals: every row of Tests/README.md whose outcome is a thrown error.
extension BadInputTests {
    @Test("a directory (always ready, cannot be watched)", arguments: backends)
    func directory(_ backend: BackendKind) async throws {
        let fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let error = #expect(throws: ArgumentError.self) { try Loop.Source(fileDescriptor: fd) { _ in } }
        #expect(error?.argument == "fileDescriptor")
        #expect(error?.value == "\(fd)")
        #expect(error?.reason == "regular files and directories are always ready and cannot be watched")
    }

    @Test("a negative repeating interval, named as the initialiser spells it", arguments: backends)
    func negativeRepeating(_ backend: BackendKind) async throws {
        let error = #expect(throws: ArgumentError.self) {
            try Loop.Timer(after: .seconds(1), repeating: .zero - .seconds(1)) { _ in }
        }
        #expect(error?.argument == "repeating")
        #expect(error?.value == "\(Duration.zero - .seconds(1))")
        #expect(error?.reason == "an interval must not be negative")
        // Both wrong: the interval is named first.
        let both = #expect(throws: ArgumentError.self) {
            try Loop.Timer(fireAt: .now, interval: .zero, tolerance: .zero - .seconds(1)) { _ in }
        }
        #expect(both?.argument == "interval")
    }

    @Test("Loop.current(creatingWith:) with a factory that makes another kind than it names", arguments: backends)
    func lyingFactory(_ backend: BackendKind) async throws {
        // The other kind is a third-party wrapper's (ThirdPartyBackendTests), so that a build
        // with one backend checks this too; then every other built-in kind, both ways round.
        let forwarding = ForwardingBackend.factory(over: backend)
        var liars = [
            (BackendFactory(kind: forwarding.kind, make: backend.factory.make), built: backend),
            (BackendFactory(kind: backend, make: forwarding.make), built: forwarding.kind),
        ]
        for other in BackendKind.allCases where other != backend {
            liars.append((BackendFactory(kind: other, make: backend.factory.make), built: backend))
        }
        for (liar, built) in liars {
            let hadLoop = try await offThePool {
                #expect(throws: BackendError.kindMismatch(existing: built, requested: liar.kind)) {
                    try Loop.current(creatingWith: liar)
                }
                return Loop.currentIfCreated != nil
            }
            #expect(!hadLoop, "a factory named \(liar.kind) that made \(built) left the thread a loop")
        }
    }

    @Test("a LoopThread whose factory throws rethrows that error", arguments: backends)
    func loopThreadFactoryThrows(_ backend: BackendKind) async throws {
        #expect(throws: Refused()) {
            try LoopThread(backend: BackendFactory(kind: backend) { throw Refused() })
        }
    }

    @Test("Loop.Port() with no descriptor left throws SystemError(eventfd, EMFILE)")
    func portOutOfDescriptors() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            var limit = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            limit.rlim_cur = 64
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            var ports: [Loop.Port<Int>] = []
            do {
                while ports.count < 1_000 { ports.append(try Loop.Port<Int>()) }
            } catch let error as SystemError {
                writeToStandardError("\(error.operation) \(error.errno.rawValue)")
            } catch {
                writeToStandardError("\(error)")
            }
        }
        #expect(String(decoding: result?.standardErrorContent ?? [], as: UTF8.self) == "eventfd \(EMFILE)")
    }
}

private struct Refused: Error, Equatable {}

/// Writes `text` to standard error, unbuffered (for exit tests to read back).
func writeToStandardError(_ text: String) {
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}
