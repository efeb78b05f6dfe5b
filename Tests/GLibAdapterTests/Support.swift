import CGLib
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// The backends of this build that start here and offer the embedding descriptor: each test
/// runs once per backend.
let embeddableBackends: [BackendKind] = startableBackends.filter { kind in
    (try? onOwnLoop(kind) { loop in (try? loop.hostDescriptor()) != nil }) == true
}

/// The backends of this build that start here but cannot be driven by a host.
let nonEmbeddableBackends: [BackendKind] = startableBackends.filter { !embeddableBackends.contains($0) }

/// How long a GLib run may take before its guard ends it: less than the join of its thread, so
/// that a hang is reported by the guard and the thread still ends.
let hostDeadline: Duration = generousDeadline / 2

/// Runs `body` on a new thread that owns a new loop of `backend` and a new GLib context (its
/// thread default), joined before this returns.
func onGLibThread<T: Sendable>(
    _ backend: BackendKind, _ body: @escaping @Sendable (Loop, GLibHost) throws -> T
) throws -> T {
    try onOwnLoop(backend) { loop in
        let host = GLibHost()
        return try body(loop, host)
    }
}

/// What happened, in order, on one thread (the loop's): events are appended there only.
final class Trace: Sendable {
    private let events = Lock<[String]>([])
    func callAsFunction(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
}
