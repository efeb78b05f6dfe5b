import Glibc

/// The part of a loop that only its own thread touches: the buffers a pass reuses so that a
/// pass allocates nothing, and the thread's timer slack.
final class ThreadLocalState: @unchecked Sendable {
    // @unchecked: every access happens on the loop's own thread (see `Loop.run`).
    var events: [ReadyEvent] = []
    var readySources: [(source: Loop.Source, readiness: Readiness)] = []
    /// The dispatch main queue's eventfd, once the main loop has bound it.
    var mainQueuePort: Int32?
    var timerSlack = TimerSlack()

    init() {
        events.reserveCapacity(64)
    }
}
