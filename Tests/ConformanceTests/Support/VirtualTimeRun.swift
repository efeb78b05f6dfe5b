import TestSupport
import Testing

/// The conformance suite's second run, on self-advancing virtual time (``TestLoopTime``,
/// `RUNLOOPKIT_TEST_TIME=virtual`): the timer, mode, observer, source and block tests run again
/// there with their expectations unchanged, reading the time from their loop (`loop.now`), never
/// from the real clock. The few that cannot hold there are disabled in that run only, each with
/// why: the reasons below.
extension Trait where Self == ConditionTrait {
    /// Disabled on virtual time, for `reason`.
    static func realTimeOnly(_ reason: RealTimeReason) -> Self {
        .enabled(if: !TestLoopTime.isVirtual, Comment(rawValue: reason.rawValue))
    }
}

/// Why a test holds on real time only.
enum RealTimeReason: String {
    /// Another thread acts while the loop sleeps until a deadline (a run's timeout or a far
    /// timer); on self-advancing time such a sleep ends at once, before the other thread acts.
    /// RunLoopKitTesting's `VirtualLoop`, whose time its test moves, is the tool for that case
    /// (its stress tests post to a sleeping virtual loop).
    case otherThreadWhileAsleep =
        "another thread acts while the loop sleeps until a deadline: on self-advancing time that sleep ends at once"
    /// The test needs a callout that takes time; on virtual time a callout takes none.
    case calloutTakesTime = "a callout must take time: on virtual time a callout takes none"
    /// The test reads the backend's kernel object, which the virtual loop's wrapper hides.
    case kernelObject = "reads the backend's kernel registrations: a virtual loop wraps its backend"
}
