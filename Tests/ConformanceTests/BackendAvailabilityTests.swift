import RunLoopKit
import Testing

/// Every backend the build includes either starts here or says why not; a backend that cannot
/// start is skipped by the rest of the suite, with its reason, never silently replaced.
@Suite("Backend availability")
struct BackendAvailabilityTests {
    @Test("each backend in the build starts, or is skipped with its reason", arguments: BackendKind.allCases)
    func startsOrSaysWhy(_ kind: BackendKind) throws {
        if let error = unavailability(of: kind) {
            guard case .unavailable(let failed, _) = error, failed == kind else {
                Issue.record("\(kind) failed with an error that does not say it is unavailable: \(error)")
                return
            }
            try Test.cancel("skipping the \(kind) conformance cases: \(error)")
        }
        let backend = try kind.factory.make()
        #expect(backend.kind == kind)
    }
}
