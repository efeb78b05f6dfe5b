import Glibc
import RunLoopKit
import TestSupport
import Testing

/// How long a wait on a thread of its own can hang before its test fails, naming the line: a
/// minute, not ``generousDeadline``'s five, for the spins of
/// ``spin(until:within:_:sourceLocation:)`` and waits on threads. Long enough for a thread
/// descheduled on a loaded two-core machine; a hang costs a minute, not the run. An await that
/// needs the cooperative pool keeps ``generousDeadline``: the whole suite in parallel, with the
/// exit tests' children starting, has held the pool's two threads for over two minutes.
let hangDeadline: Duration = .seconds(60)

/// Spins (yielding the processor) until `condition` holds, on a thread that must not sleep
/// between looks (a test that races the loop's sleep). Returns false once `deadline` passed
/// with the condition still false, after recording an issue at the caller's line: the caller
/// then stops instead of spinning for ever.
@discardableResult
func spin(
    until condition: () -> Bool, within deadline: Duration = hangDeadline, _ what: @autoclosure () -> String,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    let end = ContinuousClock.now + deadline
    while !condition() {
        guard ContinuousClock.now < end else {
            Issue.record("\(what()) within \(deadline)", sourceLocation: sourceLocation)
            return false
        }
        sched_yield()
    }
    return true
}

/// Spins until `loop` sleeps (see ``spin(until:within:_:sourceLocation:)``); false, with an
/// issue recorded at the caller's line, if it did not within `deadline`.
@discardableResult
func spinUntilWaiting(
    _ loop: Loop, within deadline: Duration = hangDeadline, sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    spin(until: { loop.isWaiting }, within: deadline, "\(loop) never went to sleep", sourceLocation: sourceLocation)
}

/// Once `loop` is about to sleep for the first time (a one-time `beforeWaiting` observer of its
/// default mode), starts a thread that spins until it sleeps (``spinUntilWaiting(_:within:sourceLocation:)``)
/// and then does `action`, a change made from another thread while the loop sleeps; the thread
/// stops the loop instead if it never sleeps.
func onceAsleep(
    _ loop: Loop, sourceLocation: SourceLocation = #_sourceLocation, _ action: @escaping @Sendable () -> Void
) {
    loop.add(
        Loop.Observer(activities: .beforeWaiting, repeats: false) { _, _ in
            _ = try? whenAsleep(loop, sourceLocation: sourceLocation, action)
        }, to: .default)
}

/// Starts a thread that spins until `loop` sleeps (``spinUntilWaiting(_:within:sourceLocation:)``)
/// and then does `action`, a change made from another thread while the loop sleeps; the thread
/// stops the loop instead if it never sleeps. Join it, or let it go.
@discardableResult
func whenAsleep(
    _ loop: Loop, sourceLocation: SourceLocation = #_sourceLocation, _ action: @escaping @Sendable () -> Void
) throws -> TestThread {
    try TestThread {
        guard spinUntilWaiting(loop, sourceLocation: sourceLocation) else { return loop.stop() }
        action()
    }
}
