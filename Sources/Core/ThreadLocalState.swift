import DequeModule
import Glibc

/// The part of a loop that only its own thread touches: the buffers a pass reuses so that a
/// pass allocates nothing, and the thread's timer slack.
final class ThreadLocalState: @unchecked Sendable {
    // @unchecked: every access happens on the loop's own thread (see `Loop.run`).
    var events: [ReadyEvent] = []
    var readySources: [(source: Loop.Source, readiness: Readiness)] = []
    /// The signalled sources a pass performs, with their signal stamps (see
    /// `performSignalledSources`).
    var signalledSources: [(source: Loop.Source, stamp: UInt64)] = []
    /// The dispatch main queue's eventfd, once the main loop has bound it.
    var mainQueuePort: Int32?
    var timerSlack = TimerSlack()
    /// Blocks a drain took from the queue and has not run yet, oldest first (see
    /// ``BlockQueue``): a drain nested in one of them serves these first.
    var takenBlocks: Deque<PendingBlock> = []
    /// The observers of the mode notified last, while no observer changed.
    var observers = ObserverSnapshot.empty
    /// The mode whose descriptors the backend watches, and the dispatch main queue's
    /// descriptor when it watches that too: only this thread changes them.
    var registeredMode: Loop.Mode?
    var registeredMainQueue: Int32?
    /// The number and flags of the stretch of work the loop is in, and where in it the loop
    /// is: the two halves of ``LoopProgress/word`` as this thread last published it.
    var progressStamp: UInt64 = 0
    var progressPlace: UInt8 = 0
    /// Since when (``Nanoseconds/now()``) the loop has been awake in its outermost run (`nil`:
    /// not running), for the statistics' time awake.
    var awakeSince: Int64?

    init() {
        events.reserveCapacity(64)
    }
}
