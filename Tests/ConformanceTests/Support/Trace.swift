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

/// The backends this build includes that can start on this machine: every conformance test
/// runs once per backend. One that cannot start (io_uring disabled, say) is reported by
/// `BackendAvailabilityTests` with the reason, and its cases are skipped.
let backends: [BackendKind] = BackendKind.allCases.filter { unavailability(of: $0) == nil }

/// Why `kind` cannot start here, or `nil` when it can.
func unavailability(of kind: BackendKind) -> BackendError? {
    do {
        _ = try kind.factory.make()
        return nil
    } catch let error as BackendError {
        return error
    } catch {
        return .unavailable(kind, .other(error as? SystemError ?? SystemError("start", errno: 0)))
    }
}
