import Logging
import RunLoopKit
import ServiceLifecycle
import TestSupport

/// The backends of this build that can start here: each test runs once per backend.
let serviceBackends: [BackendKind] = startableBackends

/// A logger for the groups under test: it drops everything (the tests check behaviour, not
/// the group's log lines).
let quietLogger = Logger(label: "service-lifecycle-tests", factory: { _ in SwiftLogNoOpLogHandler() })

/// The ordered events a scenario produced, recorded from any thread.
final class Trace: Sendable {
    private let events = Lock<[String]>([])

    /// Appends `event`. Safe from any thread.
    func callAsFunction(_ event: String) { events.withLock { $0.append(event) } }

    /// The events so far, in order.
    var all: [String] { events.withLock { $0 } }
}

/// A group of `service` alone, quiet, and the task that runs it.
func startGroup(running service: some Service) -> (ServiceGroup, Task<Void, any Error>) {
    let group = ServiceGroup(services: [service], logger: quietLogger)
    return (group, Task { try await group.run() })
}
