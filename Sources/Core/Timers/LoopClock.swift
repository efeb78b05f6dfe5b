/// Where a loop reads the time: run deadlines, timer instants and clamping all go through it.
///
/// Real loops use ``continuous``. Core's own tests give a loop a virtual clock, so that a
/// scripted backend can let time pass without sleeping and scenarios replay exactly.
package struct LoopClock: Sendable {
    /// The current instant.
    package let now: @Sendable () -> ContinuousClock.Instant

    /// A clock whose time is `now()`.
    package init(now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.now = now
    }

    /// `ContinuousClock`, the clock of every loop outside Core's tests.
    package static let continuous = LoopClock { .now }
}
