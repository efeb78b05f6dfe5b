import RunLoopKit
import RunLoopKitBackendConformance
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
        try await onDedicatedThread { try check.run(kind.factory) }
    }

    @Test("the kit's checks have distinct names and cover the contract and the loop")
    func checkList() {
        let names = BackendConformance.checks.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(
            BackendConformance.checks.map(\.name)
                == (BackendConformance.backendChecks + BackendConformance.loopChecks).map(\.name))
        #expect(BackendConformance.backendChecks.count == 16)
        #expect(BackendConformance.loopChecks.count == 5)
    }
}
