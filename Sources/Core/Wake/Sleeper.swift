/// Who waits, and so how one sleep decision (``Loop/decideSleep(in:until:for:)``) differs: the
/// loop in its own backend wait, or a host loop on the backend's descriptor
/// (``Loop/prepareForHost(in:)``). Each difference is a rule with its reason; the rest of the
/// decision is the same for both.
struct Sleeper {
    /// An empty mode sleeps rather than ending the wait. A run in an empty mode ends (R1, R5), so
    /// its wait never sleeps there; a host goes on serving the loop whatever its mode holds, so
    /// a block or a source added from another thread must find the loop asleep and wake it.
    let sleepsInEmptyMode: Bool
    /// The wait narrows the thread's timer slack to the next timer's tolerance, and ends where
    /// the slack plan puts it. The loop's own wait is the loop's system call, whose end the
    /// thread's slack delays; a host's wait is the host's call, beyond the loop's slack: its
    /// deadline is the latest instant that serves the timer, and the tolerance before it is a
    /// window for the host's rounding.
    let narrowsTimerSlack: Bool
    /// Threads waiting for the backend lock keep the loop awake. The loop's own wait holds that
    /// lock while it sleeps, so a thread that must unregister a descriptor would wait the whole
    /// sleep; a host's wait holds no lock of the loop's.
    let yieldsToBackendLockWaiters: Bool

    /// The loop's own wait in its backend.
    static var loop: Sleeper {
        Sleeper(sleepsInEmptyMode: false, narrowsTimerSlack: true, yieldsToBackendLockWaiters: true)
    }

    /// A host loop's wait on the backend's descriptor.
    static var host: Sleeper {
        Sleeper(sleepsInEmptyMode: true, narrowsTimerSlack: false, yieldsToBackendLockWaiters: false)
    }
}
