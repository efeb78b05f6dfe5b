import RunLoopKit
import Synchronization
import TestSupport

/// An item added, removed or invalidated from a churn thread, and what its callback saw.
///
/// An item invalidated from another thread may still be called by a pass that had already
/// begun; so "never called again" is checked from a later moment on: after the churn thread
/// invalidated it, a block posted afterwards marks it `gone` on the loop's thread, and from
/// then on any call is a violation. An item that invalidates itself is checked exactly.
final class ChurnRecord: Sendable {
    let what: String
    private let calls = Atomic<Int>(0)
    private let gone = Atomic<Bool>(false)
    private let violations: Violations
    /// Opened by the first call.
    let called = Latch()

    init(_ what: String, violations: Violations) {
        self.what = what
        self.violations = violations
    }

    /// Counts a call of the item's callback; returns the count, this call included.
    @discardableResult
    func call() -> Int {
        if gone.load(ordering: .sequentiallyConsistent) {
            violations.record("\(what) was called after it was invalidated or removed")
        }
        let count = calls.add(1, ordering: .relaxed).newValue
        called.open()
        return count
    }

    var callCount: Int { calls.load(ordering: .relaxed) }

    /// Marks the item gone; call on the loop's thread.
    func markGone() { gone.store(true, ordering: .sequentiallyConsistent) }

    /// Checks the item was called exactly `expected` times (at most, when `atMost`).
    func expectCalls(_ expected: Int, atMost: Bool = false) {
        let count = callCount
        if atMost ? count > expected : count != expected {
            violations.record("\(what) was called \(count) times, expected \(atMost ? "at most " : "")\(expected)")
        }
    }
}
