import RunLoopKit
import Synchronization

/// Time for a loop under test: a fixed real instant plus an offset that only the test (and
/// the scripted backend's waits) moves. Nothing sleeps; a program replays exactly.
final class VirtualClock: Sendable {
    let base: ContinuousClock.Instant
    private let elapsed = Atomic<Int64>(0)

    init() { base = .now }

    /// Nanoseconds since `base`.
    var nanoseconds: Int64 { elapsed.load(ordering: .acquiring) }

    var now: ContinuousClock.Instant { base + .nanoseconds(nanoseconds) }

    /// The loop's view of this clock.
    var loopClock: LoopClock { LoopClock { [self] in now } }

    func instant(milliseconds: Int) -> ContinuousClock.Instant { base + .milliseconds(milliseconds) }

    func advance(by duration: Duration) {
        elapsed.add(duration.nanosecondsRoundedUp, ordering: .acquiringAndReleasing)
    }

    /// `instant` as nanoseconds after `base`.
    func nanoseconds(of instant: ContinuousClock.Instant) -> Int64 {
        let (seconds, attoseconds) = (instant - base).components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// `instant` as an offset from `base`, formatted for a trace.
    func format(_ instant: ContinuousClock.Instant) -> String {
        TraceFormat.time(nanoseconds: nanoseconds(of: instant))
    }

    var formattedNow: String { TraceFormat.time(nanoseconds: nanoseconds) }
}
