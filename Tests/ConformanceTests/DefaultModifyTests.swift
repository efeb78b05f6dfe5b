import RunLoopKit
import RunLoopKitBackendConformance
import TestSupport
import Testing

/// `Backend.modify` is optional: Core never calls it, and the protocol's default (unregister,
/// then register with the new interest and token) passes the conformance kit's check of it.
@Suite("A backend without modify")
struct DefaultModifyTests {
    @Test("the default modify passes the kit's check", arguments: backends)
    func defaultModifyConforms(_ inner: BackendKind) async throws {
        let check = try #require(BackendConformance.backendChecks.first { $0.name.hasPrefix("modify ") })
        let factory = BackendFactory(kind: NoModifyBackend.kind) { NoModifyBackend(try inner.factory.make()) }
        try await onDedicatedThread { try check.run(factory) }
    }
}

/// A backend that implements only the required calls, forwarding them to a built-in backend:
/// `modify` is the protocol's default.
private final class NoModifyBackend: Backend {
    static let kind = BackendKind(name: "no-modify")
    private let inner: any Backend

    init(_ inner: any Backend) { self.inner = inner }

    var kind: BackendKind { Self.kind }
    var waker: any BackendWaker { inner.waker }

    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        try inner.register(descriptor, token: token, interest: interest)
    }

    func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        try inner.unregister(descriptor, token: token)
    }

    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) -> Bool {
        try inner.wait(timeout: timeout, into: &events)
    }
}
