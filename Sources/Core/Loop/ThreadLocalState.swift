import DequeModule
import Synchronization

/// The part of a loop that only its own thread touches: the buffers a pass reuses so that a
/// pass allocates nothing, and the thread's timer slack.
final class ThreadLocalState: @unchecked Sendable {
    // @unchecked: every access happens on the loop's own thread (see `Loop.run`). For the same
    // reason the buffers every pass looks at skip the runtime's exclusivity checks
    // (`@exclusivity(unchecked)`): no other thread's access can overlap, and each check would
    // cost a runtime call per look, several per pass.
    @exclusivity(unchecked) var events: [ReadyEvent] = []
    var readySources: [(source: Loop.Source, readiness: Readiness)] = []
    /// The signalled sources a pass performs, with their signal stamps (see
    /// `performSignalledSources`).
    var signalledSources: [(source: Loop.Source, stamp: UInt64)] = []
    /// The dispatch main queue's eventfd, once the main loop has bound it.
    var mainQueuePort: Int32?
    var timerSlack = TimerSlack()
    /// Blocks a drain took from the queue and has not run yet, oldest first (see
    /// ``BlockQueue``): a drain nested in one of them serves these first. A drain reaches it
    /// once per block.
    @exclusivity(unchecked) var takenBlocks = TakenBlocks()
    /// The observers of the mode notified last, while no observer changed.
    @exclusivity(unchecked) var observers = ObserverSnapshot.empty
    /// Between ``Loop/prepareForHost(in:)`` and ``Loop/dispatchForHost()``: the mode a host
    /// loop waits for, and since when the loop has been asleep there (`nil` when the prepare
    /// found work and the loop did not go to sleep).
    @exclusivity(unchecked) var hostWait: (mode: Loop.Mode, asleepSince: Int64?)?

    #if DEBUG
    /// The state binds to the thread that first touches it.
    private let owner = FirstThreadCheck()

    /// Traps with a message when called from another thread than the one that first
    /// touched this state (debug builds only).
    func assertConfined(to loop: Loop) {
        owner.check("RunLoopKit: \(loop)'s loop-thread state was touched from a thread that is not the loop's own")
    }
    #endif

    init() {
        events.reserveCapacity(64)
    }
}
