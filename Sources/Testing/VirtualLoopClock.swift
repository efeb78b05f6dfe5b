/// A clock whose instants are a ``VirtualLoop``'s virtual time: for code that takes a clock
/// parameter, so that its sleeps end when the test advances the loop, not in real time.
///
/// Its instants are `ContinuousClock.Instant`s, comparable with the loop's ``VirtualLoop/now``
/// and with the instants of timers on that loop. A sleep is a timer on the loop: it ends when
/// the loop's time reaches its deadline (plus at most its tolerance).
public struct VirtualLoopClock: Clock, Sendable {
    /// The loop's instants: `ContinuousClock`'s, counted on the loop's virtual time.
    public typealias Instant = ContinuousClock.Instant

    let loop: VirtualLoop

    /// The loop's current virtual instant.
    public var now: Instant { loop.now }

    /// One nanosecond: the loop's timers resolve nanoseconds.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Suspends until the loop's time reaches `deadline` (within `tolerance`).
    ///
    /// The sleep is a one-shot timer at `deadline` in the loop's common modes.
    /// - Throws: `CancellationError` when the task is cancelled first; `LoopEndedError` when the
    ///   loop ends first; `ArgumentError` naming `tolerance` when it is negative.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await loop.loop.sleep(until: deadline, tolerance: tolerance ?? .zero)
    }
}
