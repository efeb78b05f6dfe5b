internal import CRunLoopSupport

/// The calling thread's timer slack (`PR_SET_TIMERSLACK`), narrowed around exact waits.
struct TimerSlack {
    /// The thread's own slack, read the first time it is narrowed.
    private var original: UInt?

    /// Sets the least slack the kernel allows (1 ns) for the next wait.
    mutating func tighten() {
        if original == nil { original = UInt(rlk_get_timer_slack()) }
        rlk_set_timer_slack(1)
    }

    /// Puts the thread's own slack back.
    func restore() {
        if let original { rlk_set_timer_slack(UInt(original)) }
    }
}
