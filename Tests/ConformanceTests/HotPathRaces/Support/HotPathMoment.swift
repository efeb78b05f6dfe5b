import Glibc
import RunLoopKit
import TestSupport

/// When a poster acts next, relative to the loop's pass: a run of a test sweeps them all.
enum HotPathMoment {
    /// At once: the loop is still finishing the pass that reacted to the last action.
    case atOnce
    /// After a short spin of this many atomic loads, varied in small steps: sweeps the loop's
    /// way back to sleep (its last looks at its queues and flags, publishing that it sleeps,
    /// the wait itself).
    case shortly(Int)
    case yielding
    /// Once the loop sleeps (polled with 10 µs naps, not a spin that would take its CPU, and
    /// bounded: a loop may be slow to get there).
    case asleep

    init(_ random: inout SeededRandom) {
        let pick = random.next()
        switch pick >> 60 {
        case 0..<5: self = .atOnce
        case 5..<10: self = .shortly(Int((pick >> 40) & 0x3FF))
        case 10..<12: self = .yielding
        default: self = .asleep
        }
    }

    /// Waits for the moment; returns whether the loop was seen asleep (only `asleep` looks).
    @discardableResult
    func pause(_ loop: Loop, spinningOn counter: AtomicInt) -> Bool {
        switch self {
        case .atOnce:
            return false
        case let .shortly(spins):
            for _ in 0..<spins { _ = counter.value }
            return false
        case .yielding:
            sched_yield()
            return false
        case .asleep:
            for _ in 0..<200 {
                if loop.isWaiting { return true }
                var pause = timespec(tv_sec: 0, tv_nsec: 10_000)
                nanosleep(&pause, nil)
            }
            return loop.isWaiting
        }
    }
}
