import TestSupport
import Testing

/// `exportBackends` leaves out a backend that cannot start here; a run that requires it
/// (`RUNLOOPKIT_REQUIRED_BACKENDS`, set by CI) fails here instead of skipping its cases.
@Suite("Metrics export: required backends")
struct RequiredBackendsTests {
    @Test("every backend RUNLOOPKIT_REQUIRED_BACKENDS names is in this build and starts")
    func requiredBackendsStart() async throws {
        try await offThePool {
            for failure in requiredBackendFailures() { Issue.record(Comment(rawValue: failure)) }
        }
    }
}
