import Logging
import RunLoopKit
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
