import RunLoopKit
import Synchronization
import TestSupport

/// What the threads of one stress run share.
final class StressShared: Sendable {
    let plan: StressPlan
    /// Per producer: how many of its blocks the loop has run (for the producer's window).
    let consumed: [AtomicInt]
    /// Per producer: the value its version-0 source's perform must read (stored before each
    /// signal, so the perform that follows a signal sees it or a later one).
    let signalValue: [AtomicInt]
    /// Set once every producer posted its last block: churners and disruptors stop.
    let producersDone = Atomic<Bool>(false)
    let violations = Violations()
    let watchdog: Watchdog

    init(plan: StressPlan, watchdog: Watchdog) {
        self.plan = plan
        consumed = (0..<plan.producers).map { _ in AtomicInt() }
        signalValue = (0..<plan.producers).map { _ in AtomicInt(-1) }
        self.watchdog = watchdog
    }

    var isWindingDown: Bool { producersDone.load(ordering: .acquiring) }
}

/// A port message: which producer sent it and its number among that producer's messages.
struct StressMessage: Sendable {
    let producer: Int
    let sequence: Int
}
