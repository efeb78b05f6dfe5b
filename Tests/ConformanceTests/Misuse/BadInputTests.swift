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
        expectRefused("fileDescriptor", value: "\(fd)") { try Loop.Source(fileDescriptor: fd) { _ in } }
    }

    @Test("an empty interest", arguments: backends)
    func emptyInterest(_ backend: BackendKind) async throws {
        try await withPipe { pipe in
            expectRefused("interest", value: "[]") {
                try Loop.Source(fileDescriptor: pipe.readEnd, interest: []) { _ in }
            }
        }
    }

    @Test("a negative or zero interval", arguments: backends)
    func badInterval(_ backend: BackendKind) async throws {
        expectRefused("interval", value: "\(Duration.zero - .seconds(1))") {
            try Loop.Timer(fireAt: .now, interval: .zero - .seconds(1)) { _ in }
        }
        let zero = #expect(throws: ArgumentError.self) { try Loop.Timer(fireAt: .now, interval: .zero) { _ in } }
        #expect(zero?.argument == "interval")
        #expect(zero?.value == "\(Duration.zero)")
        expectRefused("repeating") {
            try Loop.Timer(after: .seconds(1), repeating: .zero) { _ in }
        }
    }

    @Test("a negative tolerance, at creation and when changed", arguments: backends)
    func negativeTolerance(_ backend: BackendKind) async throws {
        expectRefused("tolerance", value: "\(Duration.zero - .milliseconds(1))") {
            try Loop.Timer(after: .seconds(1), tolerance: .zero - .milliseconds(1)) { _ in }
        }
        let timer = try Loop.Timer(after: .seconds(1)) { _ in }
        expectRefused("tolerance") { try timer.setTolerance(.zero - .nanoseconds(1)) }
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
        expectRefused(
            "fileDescriptor", value: "\(fd)",
            reason: "regular files and directories are always ready and cannot be watched"
        ) { try Loop.Source(fileDescriptor: fd) { _ in } }
    }

    @Test("a negative repeating interval, named as the initialiser spells it", arguments: backends)
    func negativeRepeating(_ backend: BackendKind) async throws {
        expectRefused("repeating", value: "\(Duration.zero - .seconds(1))", reason: "an interval must not be negative")
        {
            try Loop.Timer(after: .seconds(1), repeating: .zero - .seconds(1)) { _ in }
        }
        // Both wrong: the interval is named first.
        expectRefused("interval") {
            try Loop.Timer(fireAt: .now, interval: .zero, tolerance: .zero - .seconds(1)) { _ in }
        }
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

/// Expects `body` to be refused with an `ArgumentError` naming `argument`, and, where given, the
/// value and the reason the error names.
func expectRefused<R>(
    _ argument: String, value: String? = nil, reason: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) {
    let error = #expect(throws: ArgumentError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.argument == argument, sourceLocation: sourceLocation)
    if let value { #expect(error?.value == value, sourceLocation: sourceLocation) }
    if let reason { #expect(error?.reason == reason, sourceLocation: sourceLocation) }
}
