import Synchronization

/// The counters behind ``Loop/Statistics``. Only the loop's thread writes them, so an
/// increment is a relaxed load and store, never a locked read-modify-write; any thread reads
/// them. Wakeups, callouts and lateness buckets are tables indexed by their kind: a new kind
/// is a case of its enum, not a counter here.
final class LoopCounters: Sendable {
    let passes = Atomic<UInt64>(0)
    /// Wakeups, indexed by ``Loop/WakeupReason/index``; room for a few reasons more.
    private let wakeups = InlineArray<8, Atomic<UInt64>> { _ in Atomic(0) }
    /// Callouts, indexed by ``Loop/CalloutKind/index``; room for a few kinds more.
    private let callouts = InlineArray<8, Atomic<UInt64>> { _ in Atomic(0) }
    /// Timer fires by lateness, bucketed at ``Loop/Statistics/TimerLateness/bounds``.
    private let lateness = InlineArray<5, Atomic<UInt64>> { _ in Atomic(0) }

    /// Nanoseconds asleep in the backend, and awake in runs.
    let asleep = Atomic<UInt64>(0)
    let awake = Atomic<UInt64>(0)

    let descriptorEvents = Atomic<UInt64>(0)

    init() {
        trap(
            unless: Loop.WakeupReason.allCases.count <= wakeups.count
                && Loop.CalloutKind.allCases.count <= callouts.count
                && Loop.Statistics.TimerLateness.bounds.count + 1 == lateness.count,
            "LoopCounters: a counter for every wakeup reason, callout kind and lateness bucket (widen the tables)")
    }

    func countPass() { bump(passes) }

    func count(_ reason: Loop.WakeupReason) { bump(wakeups[reason.index]) }

    func count(_ callout: Loop.CalloutKind, times: UInt64 = 1) { bump(callouts[callout.index], by: times) }

    /// Counts a timer fire `lateness` nanoseconds after its instant.
    func countTimerFire(latenessNanoseconds lateness: Int64) {
        // Compared as integers: the bounds are 10 µs, 100 µs, 1 ms and 10 ms.
        let bucket =
            switch lateness {
            case ..<10_000: 0
            case ..<100_000: 1
            case ..<1_000_000: 2
            case ..<10_000_000: 3
            default: 4
            }
        bump(self.lateness[bucket])
    }

    func countDescriptorEvents(_ count: Int) { bump(descriptorEvents, by: UInt64(count)) }

    /// Adds the time from `start` to `end` (on the loop's clock, see ``PassInstruments``) to the
    /// time asleep (`asleep`) or awake.
    func add(from start: Int64, to end: Int64, asleep: Bool) {
        let nanoseconds = UInt64(max(0, end &- start))
        if asleep { bump(self.asleep, by: nanoseconds) } else { bump(awake, by: nanoseconds) }
    }

    /// The counts so far, into a snapshot's tables.
    func read(
        wakeups: inout CounterTable<8>, callouts: inout CounterTable<8>, lateness: inout CounterTable<5>
    ) {
        for index in self.wakeups.indices { wakeups[index] = self.wakeups[index].load(ordering: .relaxed) }
        for index in self.callouts.indices { callouts[index] = self.callouts[index].load(ordering: .relaxed) }
        for index in self.lateness.indices { lateness[index] = self.lateness[index].load(ordering: .relaxed) }
    }

    private func bump(_ counter: borrowing Atomic<UInt64>, by amount: UInt64 = 1) {
        counter.store(counter.load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }
}
