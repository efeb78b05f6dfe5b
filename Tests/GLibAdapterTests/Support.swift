import CGLib
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// The backends of this build that start here and offer the embedding descriptor: each test
/// runs once per backend.
let embeddableBackends: [BackendKind] = startableBackends.filter { kind in
    let offers = Lock(false)
    let probe = try? TestThread(name: "probe") {
        offers.withLock { $0 = (try? Loop.current(backend: kind).hostDescriptor()) != nil }
    }
    return probe?.join() == true && offers.withLock { $0 }
}

/// The backends of this build that start here but cannot be driven by a host.
let nonEmbeddableBackends: [BackendKind] = startableBackends.filter { !embeddableBackends.contains($0) }

/// How long a GLib run may take before its guard ends it: less than the join of its thread, so
/// that a hang is reported by the guard and the thread still ends.
let hostDeadline: Duration = generousDeadline / 2

/// Runs `body` with a new GLib context (its thread's default) beside the loop
/// ``onLoopThread(_:within:fileID:line:_:)`` gives it.
func onGLibThread<T: Sendable>(
    _ backend: BackendKind, fileID: String = #fileID, line: Int = #line,
    _ body: @escaping @Sendable (Loop, GLibHost) throws -> T
) async throws -> T {
    try await onLoopThread(backend, fileID: fileID, line: line) { loop in try body(loop, GLibHost()) }
}

/// What happened, in order, on one thread (the loop's): events are appended there only.
final class Trace: Sendable {
    private let events = Lock<[String]>([])
    func callAsFunction(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
}
