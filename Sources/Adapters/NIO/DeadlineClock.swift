import NIOCore
import RunLoopKit

/// NIO's time on one loop: which clock ``LoopEventLoop/now`` reads and how a deadline becomes
/// a loop-timer instant.
///
/// On the real clock, `NIODeadline.now()` (`CLOCK_MONOTONIC`), converted to the loop's clock by
/// ``DeadlineConversion``. On a loop whose clock is not the real one (a `VirtualLoop` of
/// `RunLoopKitTesting`), the loop's own time: a deadline's nanoseconds count from when that
/// clock began, as an `EmbeddedEventLoop`'s count from zero, so `scheduleTask(in:)` and a
/// deadline from ``LoopEventLoop/now`` follow virtual time exactly.
struct DeadlineClock: Sendable {
    /// The virtual clock's origin and reading; `nil` on the real clock.
    private let virtual: (origin: ContinuousClock.Instant, now: @Sendable () -> ContinuousClock.Instant)?

    init(loop: Loop) {
        let clock = loop.clock
        // A virtual clock that does not say where it began counts from here.
        virtual = clock.readsRealTime ? nil : (clock.origin ?? clock.now(), clock.now)
    }

    /// The current deadline.
    var now: NIODeadline {
        guard let virtual else { return .now() }
        return .uptimeNanoseconds(UInt64(max(0, DeadlineConversion.nanoseconds(virtual.now() - virtual.origin))))
    }

    /// The loop-clock instant at which `deadline` is due.
    func instant(for deadline: NIODeadline) -> ContinuousClock.Instant {
        guard let virtual else { return DeadlineConversion.instant(for: deadline) }
        return virtual.origin + .nanoseconds(Int64(clamping: deadline.uptimeNanoseconds))
    }

    /// The loop-clock instant at which what is left of `deadline` has passed, for a task whose
    /// timer fired before its deadline (after a suspend; on virtual time it never does).
    func restOf(_ deadline: NIODeadline) -> ContinuousClock.Instant {
        guard virtual != nil else { return DeadlineConversion.restOf(deadline) }
        return instant(for: deadline)
    }
}
