import RunLoopKit
import RunLoopKitBackendConformance
import TestSupport
import Testing

/// The backend protocol's contract (documented on `Backend`), checked on each built-in backend
/// by the conformance kit that third-party backends run too: every check × every backend.
///
/// The kit's backend checks call the backend directly, below the loop; its loop checks run a
/// loop made with the backend's factory. Each check runs on a thread of its own (the kit makes
/// it); it is awaited from a dedicated thread so that the cooperative pool stays free.
@Suite("Backend contract")
struct BackendContractTests {
    @Test("the conformance kit's check passes", arguments: BackendConformance.checks, backends)
    func check(_ check: BackendConformance.Check, _ kind: BackendKind) async throws {
        // A check about what the backend does not offer (a host descriptor on libevent) is
        // reported skipped, with the backend's reason; the kit has checked that reason.
        if let reason = try check.skipReason(for: kind.factory) { try Test.cancel(Comment(rawValue: reason)) }
        try await offThePool { try check.run(kind.factory, stressScale: stressScale) }
    }

    @Test(
        "the kit's embedding checks apply to a backend that offers a host descriptor, and say why not to one that does not",
        arguments: backends)
    func embeddingChecksApply(_ kind: BackendKind) async throws {
        try await offThePool {
            // The built-in backends' answers are known; a later one's (GLib's) is its own to give.
            let offers = [.epoll, .uring].contains(kind) || (kind != .libevent && embeddableBackends.contains(kind))
            let embeddingNames = BackendConformance.checks.map(\.name).filter { $0.contains("host descriptor") }
            #expect(embeddingNames.count == 3)
            for check in BackendConformance.checks where !ownSourceCheckNames.contains(check.name) {
                let reason = try check.skipReason(for: kind.factory)
                if offers || !embeddingNames.contains(check.name) {
                    #expect(reason == nil, "\(check.name) applies to \(kind)")
                } else {
                    #expect(reason.map { !$0.isEmpty } == true, "\(check.name) on \(kind) says why not")
                    if kind == .libevent { #expect(reason?.contains("event_base") == true) }
                }
            }
        }
    }

    @Test(
        "the kit's check of a backend's own sources (G1) applies to a backend that serves some, and says why not to one that does not",
        arguments: backends)
    func ownSourceChecksApply(_ kind: BackendKind) async throws {
        try await offThePool {
            #expect(ownSourceCheckNames.count == 1)
            let serves: Bool
            if case .passPhase = try kind.factory.make().ownSources { serves = true } else { serves = false }
            #expect(serves == (kind.name == "glib"))
            for check in BackendConformance.checks where ownSourceCheckNames.contains(check.name) {
                let reason = try check.skipReason(for: kind.factory)
                if serves {
                    #expect(reason == nil, "\(check.name) applies to \(kind)")
                } else {
                    #expect(
                        reason?.contains("serves no sources of its own as a pass phase") == true,
                        "\(check.name) on \(kind) says why not")
                }
            }
        }
    }

    @Test("the kit's checks have distinct names and cover the contract and the loop")
    func checkList() async throws {
        try await offThePool {
            let names = BackendConformance.checks.map(\.name)
            #expect(Set(names).count == names.count)
            #expect(
                BackendConformance.checks.map(\.name)
                    == (BackendConformance.backendChecks + BackendConformance.loopChecks).map(\.name))
            #expect(BackendConformance.backendChecks.count == 19)
            #expect(BackendConformance.loopChecks.count == 6)
        }
    }
}

/// The names of the kit's checks of rule G1 (a backend's own sources).
private let ownSourceCheckNames = BackendConformance.checks.map(\.name).filter { $0.contains("own sources") }
