/// Why a wait that slept ended, for ``Loop/Statistics``: each wakeup is counted once, under the
/// first reason that applies, in the order of the cases.
enum WakeupReason: Int, CaseIterable {
    /// A timer fired.
    case timer
    /// A version-1 source was handled (or the backend's own sources were dispatched).
    case source
    /// The dispatch main queue was drained.
    case mainQueue
    /// Another thread woke the loop for this sleep.
    case woken
    /// The wait reached the end it was planned with.
    case timeout
    /// None of these: a wakeup RunLoopKit is built never to have.
    case spurious

    /// The reason a pass's sleep ended, from what the pass then did and how the wait went.
    init(firedTimers: Bool, handledSources: Bool, drainedMainQueue: Bool, woken: Bool, reachedDeadline: Bool) {
        self =
            if firedTimers {
                .timer
            } else if handledSources {
                .source
            } else if drainedMainQueue {
                .mainQueue
            } else if woken {
                .woken
            } else if reachedDeadline {
                .timeout
            } else {
                .spurious
            }
    }
}
