internal import CRunLoopSupport

/// The calling thread's timer slack (`PR_SET_TIMERSLACK`), and where a wait for a timer must
/// end so that the slack can never make it late.
///
/// Linux lets a timed sleep overrun by the thread's timer slack (50 µs by default). A timer
/// must fire within its tolerance, so a wait bounded by a timer ends `slack` before the timer's
/// deadline (its instant plus its tolerance), with the slack narrowed to at most the
/// tolerance: the kernel then wakes the thread between the timer's instant and its deadline,
/// never early and never later than the tolerance allows. A tolerance at least as large as
/// the thread's slack needs no change of slack, which leaves the kernel free to coalesce.
package struct TimerSlack {
    /// The thread's own slack in nanoseconds, read the first time it is needed.
    private var original: UInt?
    /// The slack the thread has now, when narrowed.
    private var narrowed: UInt?

    package init() {}

    /// Where a wait for a timer with `deadline` (instant + `tolerance`) ends, and the slack
    /// it needs (`nil`: the thread's own). Times in nanoseconds on ``QueueTime``'s scale.
    package mutating func plan(deadline: Int64, tolerance: Int64) -> (wakeAt: Int64, slack: UInt?) {
        let threadSlack = threadOwnSlack()
        let window = UInt(max(0, tolerance))
        // No window at all: end at the instant itself, with the least slack the kernel allows
        // (1 ns; 0 would mean "the default").
        if window == 0 { return (deadline, 1) }
        if window >= threadSlack { return (deadline &- Int64(threadSlack), nil) }
        return (deadline &- Int64(window), window)
    }

    /// The latest a wait until `wakeAt` can end with `slack` (`nil`: the thread's own).
    mutating func latestEnd(ofWaitUntil wakeAt: Int64, slack: UInt?) -> Int64 {
        wakeAt.addingSaturating(Int64(slack ?? threadOwnSlack()))
    }

    /// Sets the slack for the next wait (`nil`: the thread's own), with a system call only
    /// when it changes.
    mutating func apply(_ slack: UInt?) {
        let wanted = slack ?? threadOwnSlack()
        guard wanted != (narrowed ?? threadOwnSlack()) else { return }
        rlk_set_timer_slack(wanted)
        narrowed = wanted == threadOwnSlack() ? nil : wanted
    }

    /// Puts the thread's own slack back, if it was narrowed (the outermost run's end).
    mutating func restore() {
        apply(nil)
    }

    /// The thread's own slack (for tests of ``plan(deadline:tolerance:)``).
    package var threadSlackForTesting: UInt {
        mutating get { threadOwnSlack() }
    }

    private mutating func threadOwnSlack() -> UInt {
        if let original { return original }
        let slack = max(1, UInt(rlk_get_timer_slack()))
        original = slack
        return slack
    }
}
