import RunLoopKit
import TestSupport
import Testing

/// Every backend the build includes either starts here or says why not; a backend that cannot
/// start is never silently replaced. Without `RUNLOOPKIT_REQUIRED_BACKENDS` (a user's machine)
/// it is skipped by the rest of the suite, with its reason; with it (CI), a required backend
/// that does not start, or that the build does not include, fails the run.
@Suite("Backend availability")
struct BackendAvailabilityTests {
    @Test(
        "each backend in the build starts, or is skipped with its reason (fails if RUNLOOPKIT_REQUIRED_BACKENDS lists it)",
        arguments: BackendKind.allCases)
    func startsOrSaysWhy(_ kind: BackendKind) async throws {
        try await offThePool {
            if let error = unavailability(of: kind) {
                guard case .unavailable(let failed, _) = error, failed == kind else {
                    Issue.record("\(kind) failed with an error that does not say it is unavailable: \(error)")
                    return
                }
                if isRequired(kind) {
                    Issue.record("RUNLOOPKIT_REQUIRED_BACKENDS requires \(kind), which cannot start here: \(error)")
                    return
                }
                try Test.cancel("skipping the \(kind) conformance cases: \(error)")
            }
            let backend = try kind.factory.make()
            #expect(backend.kind == kind)
        }
    }

    @Test("every backend RUNLOOPKIT_REQUIRED_BACKENDS names is in this build and starts")
    func requiredBackendsStart() async throws {
        try await offThePool {
            for failure in requiredBackendFailures() { Issue.record(Comment(rawValue: failure)) }
        }
    }
}
