import Glibc
import RunLoopKit
import RunLoopKitBackendConformance
import TestSupport
import Testing

/// The conformance kit fails a backend that breaks the contract, and says how: each test
/// breaks one promise in a wrapper around a built-in backend and runs the check that covers it.
@Suite("Backend conformance kit failures")
struct BackendConformanceFailureTests {
    @Test("a backend that ignores registrations fails the readiness check, naming it", arguments: backends)
    func deafBackend(_ kind: BackendKind) async throws {
        let factory = BrokenBackend.factory(over: kind, breaking: .ignoresRegistrations)
        let failure = try await failure(of: "a readable descriptor is reported with its token, as readable", factory)
        #expect(failure.check == "a readable descriptor is reported with its token, as readable")
        #expect(failure.expected == "the pipe's read end, with a byte in it, to be reported")
        #expect(failure.observed == "no event within 0.2 seconds")
    }

    @Test("a backend that returns before its timeout fails the never-early check", arguments: backends)
    func earlyBackend(_ kind: BackendKind) async throws {
        // Returning at once, not merely sooner: a wait cut to half its timeout still often
        // lasts the whole timeout on a loaded machine (timer slack, descheduling), and the
        // check only fails a backend that is early every time.
        let factory = BrokenBackend.factory(over: kind, breaking: .returnsAtOnce)
        let failure = try await failure(of: "a wait with nothing ready never returns before its timeout", factory)
        #expect(failure.expected.hasSuffix("(timeouts round up)"))
        #expect(failure.observed.hasPrefix("10 waits in a row returned early"))
    }

    @Test("a backend that throws EINVAL for a closed descriptor fails the errno check", arguments: backends)
    func wrongErrno(_ kind: BackendKind) async throws {
        let factory = BrokenBackend.factory(over: kind, breaking: .wrongErrno)
        let failure = try await failure(
            of: "registering a negative or closed descriptor throws SystemError(badFileDescriptor)", factory)
        #expect(failure.observed == "\(SystemError("register", errno: EINVAL))")
    }

    @Test("a backend whose waker does nothing fails the wake and wake-race checks", arguments: backends)
    func deafWaker(_ kind: BackendKind) async throws {
        let factory = BrokenBackend.factory(over: kind, breaking: .deafWaker)
        let early = try await failure(of: "a wake posted before a wait makes that wait return, woken", factory)
        #expect(early.observed == "it slept its whole timeout (0.2 seconds)")
        // The race's first poke, and every 32nd after it, is made once the loop is inside the
        // backend's wait, so a deaf waker loses a poke at once, noticed by the loop or by the
        // poster a deadline later. Or, when the machine is so loaded that the check outlasts its
        // limit (4 deadlines) first, it fails as a check that did not finish: seen under the
        // Thread Sanitizer with the whole suite running on two CPUs, where this test's four
        // cases took 59 s. Either way the deaf waker fails; it can never pass.
        let race = try await failure(
            of: "cross-thread wake race: no signal or block posted to the loop is lost", factory,
            deadline: .seconds(1))
        let lostPoke =
            race.expected == "every one of 3000 cross-thread pokes to wake the loop"
            && (race.observed.hasSuffix("1.0 seconds while a poke was pending")
                || race.observed.hasSuffix("was not handled within 1.0 seconds"))
        let overLimit = race.expected == "the check to finish within 4.0 seconds"
        #expect(lostPoke || overLimit, "\(race.expected): \(race.observed)")
    }

    @Test("a factory whose backend names another kind fails every check", arguments: backends)
    func wrongKind(_ kind: BackendKind) async throws {
        let factory = BackendFactory(kind: BackendKind(name: "other")) { try kind.factory.make() }
        let failure = try await failure(of: "a wake posted before a wait makes that wait return, woken", factory)
        #expect(failure.expected == "the backend's kind to be the factory's, other")
        #expect(failure.observed == "kind \(kind)")
    }

    /// Runs the named check with a short deadline (0.2 s unless given) and returns how it failed.
    private func failure(
        of name: String, _ factory: BackendFactory, deadline: Duration = .milliseconds(200)
    ) async throws -> BackendConformance.Failure {
        let check = try #require(BackendConformance.checks.first { $0.name == name })
        return try await offThePool {
            do {
                try check.run(factory, deadline: deadline)
            } catch let failure as BackendConformance.Failure {
                return failure
            }
            return BackendConformance.Failure(check: name, expected: "a failure", observed: "the check passed")
        }
    }
}

/// A built-in backend with one promise broken.
private final class BrokenBackend: WrappingBackend {
    enum Breach: Sendable { case ignoresRegistrations, returnsAtOnce, wrongErrno, deafWaker }

    let inner: any Backend
    private let breach: Breach
    let kind = BackendKind(name: "broken")

    private init(_ inner: any Backend, breach: Breach) {
        self.inner = inner
        self.breach = breach
    }

    static func factory(over kind: BackendKind, breaking breach: Breach) -> BackendFactory {
        BackendFactory(kind: BackendKind(name: "broken")) { BrokenBackend(try kind.factory.make(), breach: breach) }
    }

    var waker: any BackendWaker { breach == .deafWaker ? DeafWaker() : inner.waker }

    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        if breach == .wrongErrno, fcntl(descriptor, F_GETFD) == -1 { throw SystemError("register", errno: EINVAL) }
        if breach == .ignoresRegistrations { return }
        try inner.register(descriptor, token: token, interest: interest)
    }

    func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        if breach == .ignoresRegistrations { return }
        try inner.unregister(descriptor, token: token)
    }

    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        if breach == .returnsAtOnce, timeout != nil {
            events.removeAll(keepingCapacity: true)
            return
        }
        try inner.wait(timeout: timeout, into: &events)
    }
}

/// A waker that wakes nothing.
private struct DeafWaker: BackendWaker {
    func wake() {}
}
