import RunLoopKit
import Synchronization

/// The ordered events a scenario produced, recorded from any thread.
///
/// Tests compare a trace exactly with the events the scenario must produce.
final class Trace: Sendable {
    private let events = Lock<[String]>([])

    /// Appends `event`. Safe from any thread.
    func callAsFunction(_ event: String) {
        events.withLock { $0.append(event) }
    }

    /// The events so far, in order.
    var all: [String] { events.withLock { $0 } }

    /// The number of events so far.
    var count: Int { events.withLock { $0.count } }
}
