import DequeModule
import Glibc
import Synchronization

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
    // Unchecked: a drain reaches this list once per block, and a dynamic exclusivity check
    // on a class property costs a runtime call each time; only the loop thread touches it, and
    // never while another access to it is open (no call is made with it borrowed).
    @exclusivity(unchecked) var takenBlocks = TakenBlocks()
    /// The observers of the mode notified last, while no observer changed.
    var observers = ObserverSnapshot.empty
    /// The number and flags of the stretch of work the loop is in, and where in it the loop
    /// is: the two halves of ``LoopProgress/word`` as this thread last published it.
    var progressStamp: UInt64 = 0
    var progressPlace: UInt8 = 0
    /// Since when (``Nanoseconds/now()``) the loop has been awake in its outermost run (`nil`:
    /// not running), for the statistics' time awake.
    var awakeSince: Int64?
    /// Between ``Loop/prepareForHost(in:)`` and ``Loop/dispatchForHost()``: the mode a host
    /// loop waits for, and since when the loop has been asleep there (`nil` when the prepare
    /// found work and the loop did not go to sleep).
    var hostWait: (mode: Loop.Mode, asleepSince: Int64?)?

    #if DEBUG
    /// The thread that first touched this state (`pthread_self()`), 0 until then: the
    /// state binds to its thread on first use, since a loop may be created on one thread
    /// (the main loop, from any) and run on another.
    private let owner = Atomic<UInt>(0)

    /// Traps with a message when called from another thread than the one that first
    /// touched this state (debug builds only).
    func assertConfined(to loop: Loop) {
        let me = UInt(pthread_self())
        let (bound, current) = owner.compareExchange(expected: 0, desired: me, ordering: .relaxed)
        precondition(
            bound || current == me,
            "RunLoopKit: \(loop)'s loop-thread state was touched from a thread that is not the loop's own")
    }
    #endif

    init() {
        events.reserveCapacity(64)
    }
}
