import Synchronization

/// The counters behind ``Loop/Statistics``. Only the loop's thread writes them, so an
/// increment is a relaxed load and store, never a locked read-modify-write; any thread reads
/// them.
final class LoopCounters: Sendable {
    let passes = Atomic<UInt64>(0)
    /// Wakeups, indexed by ``WakeupReason/rawValue``.
    private let wakeups = InlineArray<6, Atomic<UInt64>> { _ in Atomic(0) }

    /// Nanoseconds asleep in the backend, and awake in runs.
    let asleep = Atomic<UInt64>(0)
    let awake = Atomic<UInt64>(0)

    /// Callouts, by ``Loop/CalloutKind``.
    let observerCallouts = Atomic<UInt64>(0)
    let timerCallouts = Atomic<UInt64>(0)
    let version0Callouts = Atomic<UInt64>(0)
    let descriptorCallouts = Atomic<UInt64>(0)
    let portMessages = Atomic<UInt64>(0)
    let blockCallouts = Atomic<UInt64>(0)
    let mainQueueDrains = Atomic<UInt64>(0)

    /// Timer fires by lateness, bucketed at ``Loop/Statistics/TimerLateness/bounds``.
    let lateUnder10Microseconds = Atomic<UInt64>(0)
    let lateUnder100Microseconds = Atomic<UInt64>(0)
    let lateUnder1Millisecond = Atomic<UInt64>(0)
    let lateUnder10Milliseconds = Atomic<UInt64>(0)
    let lateAtLeast10Milliseconds = Atomic<UInt64>(0)

    let descriptorEvents = Atomic<UInt64>(0)

    init() {
        trap(
            unless: WakeupReason.allCases.count == wakeups.count,
            "LoopCounters: one wakeup counter per WakeupReason (\(WakeupReason.allCases.count)), not \(wakeups.count)")
    }

    func countPass() { bump(passes) }

    func count(_ reason: WakeupReason) { bump(wakeups[reason.rawValue]) }

    /// The wakeups counted for `reason`.
    func wakeups(_ reason: WakeupReason) -> UInt64 { wakeups[reason.rawValue].load(ordering: .relaxed) }

    func count(_ callout: Loop.CalloutKind, times: UInt64 = 1) {
        switch callout {
        case .observer: bump(observerCallouts, by: times)
        case .timer: bump(timerCallouts, by: times)
        case .version0Source: bump(version0Callouts, by: times)
        case .descriptorSource: bump(descriptorCallouts, by: times)
        case .portMessage: bump(portMessages, by: times)
        case .block: bump(blockCallouts, by: times)
        case .mainQueue: bump(mainQueueDrains, by: times)
        }
    }

    /// Counts a timer fire `lateness` after its instant.
    func countTimerFire(lateness: Duration) {
        // Compared as integers: the bounds are 10 µs, 100 µs, 1 ms and 10 ms.
        switch Nanoseconds.of(lateness) {
        case ..<10_000: bump(lateUnder10Microseconds)
        case ..<100_000: bump(lateUnder100Microseconds)
        case ..<1_000_000: bump(lateUnder1Millisecond)
        case ..<10_000_000: bump(lateUnder10Milliseconds)
        default: bump(lateAtLeast10Milliseconds)
        }
    }

    func countDescriptorEvents(_ count: Int) { bump(descriptorEvents, by: UInt64(count)) }

    /// Adds the time from `start` to `end` (``Nanoseconds/now()``) to the time asleep
    /// (`asleep`) or awake.
    func add(from start: Int64, to end: Int64, asleep: Bool) {
        let nanoseconds = UInt64(max(0, end &- start))
        if asleep { bump(self.asleep, by: nanoseconds) } else { bump(awake, by: nanoseconds) }
    }

    private func bump(_ counter: borrowing Atomic<UInt64>, by amount: UInt64 = 1) {
        counter.store(counter.load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }
}
