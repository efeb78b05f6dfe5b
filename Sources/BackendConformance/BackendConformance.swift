import RunLoopCore

/// A conformance kit for `Backend` implementations: named checks of the contract documented
/// on `Backend`, runnable from any test framework.
///
/// Each ``Check`` makes its own backends (and, for the loop checks, its own `Loop` on a
/// thread of its own) with the factory it is given, and throws a ``Failure`` that says what was
/// expected and what happened. A third-party backend's test suite runs them all, for example
/// with Swift Testing:
///
/// ```swift
/// import RunLoopKitBackendConformance
/// import Testing
///
/// let factory = BackendFactory(kind: BackendKind(name: "poll")) { try PollBackend() }
///
/// @Test(arguments: BackendConformance.checks)
/// func conforms(_ check: BackendConformance.Check) throws {
///     try check.run(factory)
/// }
/// ```
///
/// The checks wait for events with a generous deadline (`defaultDeadline`) rather than
/// measure time, so they pass on a loaded machine; a broken backend fails them (a lost wake,
/// say, after the deadline). The kit imports neither Testing nor XCTest.
public enum BackendConformance {
    /// Every check: the backend contract (`backendChecks`), then loops on the backend
    /// (`loopChecks`).
    public static var checks: [Check] { backendChecks + loopChecks }

    /// The checks of the `Backend` protocol's contract, each on a backend of its own, called
    /// directly as Core calls it.
    /// The embedding checks (a host loop polling the backend's `embedding` descriptor) apply
    /// only to a backend that offers one: see ``Check/skipReason(for:)``.
    public static var backendChecks: [Check] {
        readinessChecks + waitingChecks + registrationChecks + embeddingChecks
    }

    /// Scenarios on a `Loop` made with the factory, on a thread of the check's own: a timer,
    /// a descriptor source, a signal and a race of cross-thread wakes, a `LoopThread`, and the
    /// backend's own sources (rule G1), which applies only to a backend that serves some: see
    /// ``OwnSourcesForConformance`` and ``Check/skipReason(for:)``.
    public static var loopChecks: [Check] { loopScenarioChecks + ownSourceChecks }

    /// How long a check waits for an event that must come (a wake, a ready descriptor, a
    /// loop's answer) before it fails: generous, because a thread on a loaded machine can be
    /// descheduled for a long while. A passing check never waits this long.
    public static let defaultDeadline: Duration = .seconds(30)
}
