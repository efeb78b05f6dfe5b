import RunLoopKit
import RunLoopKitBackendConformance

/// A one-shot gate: `wait` blocks (without spinning) until `open` is called or time runs out.
/// The conformance kit's gate, with a default deadline and a wait off the cooperative pool.
public final class Latch: Sendable {
    private let gate: Gate

    public init() { gate = Gate() }

    /// The latch that is `gate` (a ``TestThread``'s `finished`).
    init(_ gate: Gate) { self.gate = gate }

    /// Opens the gate; later calls have no effect. Safe from any thread.
    public func open() { gate.open() }

    /// Whether the gate was opened.
    public var isOpen: Bool { gate.isOpen }

    /// Waits until opened; false if `timeout` passed first.
    @discardableResult
    public func wait(for timeout: Duration = generousDeadline) -> Bool { gate.wait(for: timeout) }

    /// Waits until opened (false after `timeout`), on a thread of its own: an async test that
    /// waits does not hold one of the few cooperative threads meanwhile.
    public func waitOffPool(for timeout: Duration = generousDeadline) async -> Bool {
        await withCheckedContinuation { continuation in
            do {
                _ = try TestThread(name: "latch-wait") { continuation.resume(returning: self.wait(for: timeout)) }
            } catch {
                continuation.resume(returning: false)
            }
        }
    }
}
