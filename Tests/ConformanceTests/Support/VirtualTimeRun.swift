import TestSupport
import Testing

/// The conformance suite's second run, on self-advancing virtual time (``TestLoopTime``,
/// `RUNLOOPKIT_TEST_TIME=virtual`): the timer, mode, observer, source and block tests whose
/// loops `onLoopThread` makes run again there with their expectations unchanged, reading the
/// time from their loop (`loop.now`) where an instant matters. The few that cannot hold there
/// are disabled in that run only, each with why: the reasons below.
extension Trait where Self == ConditionTrait {
    /// Disabled on virtual time, for `reason`.
    static func realTimeOnly(_ reason: RealTimeReason) -> Self {
        .enabled(if: !TestLoopTime.isVirtual, Comment(rawValue: reason.rawValue))
    }
}

/// Why a test holds on real time only.
enum RealTimeReason: String {
    /// Another thread acts while the loop sleeps until a deadline (a run's timeout or a far
    /// timer); on self-advancing time the move of time to that deadline races it, so the sleep
    /// may end first. RunLoopKitTesting's `VirtualLoop`, whose time its test moves, is the tool
    /// for that case (its stress tests post to a sleeping virtual loop).
    case otherThreadWhileAsleep =
        "another thread acts while the loop sleeps until a deadline: on self-advancing time, time races it there"
    /// The test makes time pass by spinning (in a callout, or before a run); on virtual time,
    /// spinning takes none, and what the test checks would hold without it.
    case spinningTakesTime = "makes time pass by spinning: on virtual time spinning takes none"
    /// The test finds the backend's kernel object by the backend's type (io_uring's and
    /// GLib's), which the virtual loop's wrapper hides.
    case kernelObject = "finds the backend's kernel registrations by its type: a virtual loop wraps its backend"
}
