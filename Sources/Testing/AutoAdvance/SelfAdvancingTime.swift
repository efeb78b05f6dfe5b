import RunLoopCore
import Synchronization

/// The time of a loop on self-advancing virtual time (``AutoAdvancingBackend``): an offset from
/// the real instant it was made, moved only by the loop's own waits, read lock-free by its
/// clock from any thread.
final class SelfAdvancingTime: Sendable {
    /// The real instant the time counts from.
    let origin: ContinuousClock.Instant = .now
    private let elapsed = Atomic<Int64>(0)

    /// The current virtual instant.
    var now: ContinuousClock.Instant { origin + .nanoseconds(elapsed.load(ordering: .acquiring)) }

    /// `duration` passes (the loop's thread, in a wait that found nothing).
    func pass(_ duration: Duration) {
        elapsed.add(VirtualTime.nanosecondsRoundedUp(duration), ordering: .releasing)
    }

    /// The loop's clock.
    var loopClock: LoopClock { LoopClock(now: { [self] in now }, origin: origin) }
}

extension Loop {
    /// Creates the calling thread's loop over `backend`, on virtual time that moves by itself:
    /// each wait with a timeout that finds nothing ready passes its whole timeout at once (see
    /// ``AutoAdvancingBackend``). Time starts at the real instant of this call. For the
    /// conformance suite's run on virtual time, whose tests run their loops on their own
    /// threads.
    ///
    /// Traps if the thread already has a loop, or is the main thread.
    package static func bindNewOnSelfAdvancingTime(backend: BackendKind) throws -> Loop {
        let time = SelfAdvancingTime()
        return try Loop.bindNew(creatingWith: try backend.requireFactory(), clock: time.loopClock) {
            AutoAdvancingBackend(wrapping: $0, time: time)
        }
    }
}
