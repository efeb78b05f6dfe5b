import RunLoopKit
import RunLoopKitBackendConformance
import Synchronization
import TestSupport
import Testing

/// The third-party path: a backend RunLoopKit does not know (here, a wrapper around a built-in
/// one, with a kind of its own) passes the conformance kit and runs loops, through the public
/// API only.
@Suite("A third-party backend")
struct ThirdPartyBackendTests {
    @Test("passes the conformance kit's check", arguments: BackendConformance.checks, backends)
    func conforms(_ check: BackendConformance.Check, _ inner: BackendKind) async throws {
        try await offThePool { try check.run(ForwardingBackend.factory(over: inner), stressScale: stressScale) }
    }

    @Test("runs a loop made with Loop.current(creatingWith:), which reports its kind", arguments: backends)
    func loopOnIt(_ inner: BackendKind) async throws {
        let factory = ForwardingBackend.factory(over: inner)
        let (kind, description, result, waits) = try await offThePool {
            let loop = try Loop.current(creatingWith: factory)
            let timer = try Loop.Timer(after: .milliseconds(1)) { _ in }
            loop.add(timer, to: .default)
            let result = loop.run(.default, timeout: generousDeadline)
            let waits = loop.withBackend { ($0 as? ForwardingBackend)?.waits.load(ordering: .relaxed) ?? -1 }
            return (loop.backend, loop.description, result, waits)
        }
        #expect(kind == ForwardingBackend.kind)
        #expect(kind.name == "forwarding" && !kind.isBuiltIn)
        #expect(description == "Loop(forwarding)")
        #expect(result == .finished)
        #expect(waits >= 1) // The loop waited in the third-party backend.
    }

    @Test("runs a LoopThread", arguments: backends)
    func loopThread(_ inner: BackendKind) async throws {
        try await offThePool {
            let thread = try LoopThread(name: "third-party", backend: ForwardingBackend.factory(over: inner))
            defer { thread.stop() }
            let ran = Atomic<Bool>(false)
            thread.perform(waitUntilDone: true) { ran.store(true, ordering: .relaxed) }
            let didRun = ran.load(ordering: .relaxed)
            #expect(didRun)
            #expect(thread.loop.backend == ForwardingBackend.kind)
        }
    }

    @Test("a thread with a third-party loop refuses a built-in kind, and the other way round", arguments: backends)
    func kindMismatch(_ inner: BackendKind) async throws {
        let factory = ForwardingBackend.factory(over: inner)
        try await offThePool {
            _ = try Loop.current(creatingWith: factory)
            #expect(throws: BackendError.kindMismatch(existing: ForwardingBackend.kind, requested: inner)) {
                try Loop.current(backend: inner)
            }
        }
        try await offThePool {
            _ = try Loop.current(backend: inner)
            #expect(throws: BackendError.kindMismatch(existing: inner, requested: ForwardingBackend.kind)) {
                try Loop.current(creatingWith: factory)
            }
        }
    }

    @Test("the kind-only entry points refuse a third-party kind with notBuiltIn")
    func notBuiltIn() async throws {
        let kind = BackendKind(name: "forwarding")
        #expect(BackendKind.allCases.allSatisfy { $0.isBuiltIn })
        #expect(!BackendKind.allCases.contains(kind))
        #expect(BackendKind(rawValue: "forwarding") == nil)
        #expect(kind == ForwardingBackend.kind && kind.rawValue == "forwarding")
        #expect(throws: BackendError.notBuiltIn(kind)) { try LoopThread(backend: kind) }
        try await offThePool { () throws in
            #expect(throws: BackendError.notBuiltIn(kind)) { try Loop.current(backend: kind) }
            #expect(Loop.currentIfCreated == nil)
        }
        #expect(
            "\(BackendError.notBuiltIn(kind))"
                == "forwarding is not a backend built into RunLoopKit; create its loop with its own BackendFactory")
    }
}

/// A backend written "outside RunLoopKit": it forwards every call to a built-in backend, and
/// names itself `forwarding`. It counts its waits, so a test can see the loop used it.
final class ForwardingBackend: WrappingBackend {
    static let kind = BackendKind(name: "forwarding")

    let inner: any Backend
    /// How many waits the loop made; read through `Loop.withBackend`.
    let waits = Atomic<Int>(0)

    /// `forwarding`, or the name a test gives (a third-party `glib`).
    let kind: BackendKind

    init(_ inner: any Backend, kind: BackendKind = ForwardingBackend.kind) {
        self.inner = inner
        self.kind = kind
    }

    /// A factory of forwarding backends over `inner`'s.
    static func factory(over inner: BackendKind) -> BackendFactory {
        BackendFactory(kind: kind) { ForwardingBackend(try inner.factory.make()) }
    }

    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        waits.add(1, ordering: .relaxed)
        try inner.wait(timeout: timeout, into: &events)
    }
}

/// Over the GLib backend, the kit's check of rule G1 makes one of GLib's sources through it.
extension ForwardingBackend: OwnSourcesForConformance {
    func addReadyOwnSource(_ callback: @escaping () -> Void) {
        (inner as? any OwnSourcesForConformance)?.addReadyOwnSource(callback)
    }
}
