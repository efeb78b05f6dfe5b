import HeapModule

/// The timers of one mode, by the instant they are due.
///
/// Deletion is lazy, with a generation count: re-arming or invalidating a timer bumps its
/// generation and pushes a fresh entry; entries whose generation no longer matches (or whose
/// timer left the mode) are discarded when they reach the top. That keeps add, re-arm and
/// invalidate O(log n) with swift-collections' `Heap`, which cannot remove an arbitrary element.
struct TimerQueue {
    struct Entry: Comparable {
        let instant: ContinuousClock.Instant
        let order: Int
        let sequence: UInt64
        let generation: UInt64
        let timer: Loop.Timer

        static func < (a: Entry, b: Entry) -> Bool {
            if a.instant != b.instant { return a.instant < b.instant }
            if a.order != b.order { return a.order < b.order }
            return a.sequence < b.sequence
        }

        static func == (a: Entry, b: Entry) -> Bool {
            a.instant == b.instant && a.order == b.order && a.sequence == b.sequence
        }
    }

    /// Latest acceptable firing time of a timer with a tolerance.
    struct Deadline: Comparable {
        let deadline: ContinuousClock.Instant
        let generation: UInt64
        let timer: Loop.Timer

        static func < (a: Deadline, b: Deadline) -> Bool { a.deadline < b.deadline }
        static func == (a: Deadline, b: Deadline) -> Bool { a.deadline == b.deadline }
    }

    private var byInstant = Heap<Entry>()
    /// The same entries by instant + tolerance: what the loop's sleep is bounded by.
    private var byDeadline = Heap<Deadline>()

    /// Queues `timer` at `instant`; `generation` identifies this arming.
    mutating func insert(_ timer: Loop.Timer, at instant: ContinuousClock.Instant, tolerance: Duration, generation: UInt64) {
        byInstant.insert(Entry(instant: instant, order: timer.order, sequence: timer.addSequence.load(ordering: .relaxed), generation: generation, timer: timer))
        byDeadline.insert(Deadline(deadline: instant + tolerance, generation: generation, timer: timer))
    }

    /// Removes and returns the first live timer due at or before `limit`.
    ///
    /// Stale entries met on the way are moved to `discarded`: the caller releases them after
    /// unlocking, because the last reference to a timer may be in one and its deinit may call
    /// back into the loop.
    mutating func popDue(notAfter limit: ContinuousClock.Instant, discarded: inout [Loop.Timer], isLive: (Loop.Timer, UInt64) -> Bool) -> (Loop.Timer, UInt64)? {
        while let top = byInstant.min {
            guard isLive(top.timer, top.generation) else {
                discarded.append(byInstant.removeMin().timer)
                continue
            }
            guard top.instant <= limit else { return nil }
            byInstant.removeMin()
            return (top.timer, top.generation)
        }
        return nil
    }

    /// The latest instant the loop may wake and still serve every timer within its tolerance.
    /// Stale entries met on the way are moved to `discarded`, as in ``popDue``.
    mutating func earliestDeadline(discarded: inout [Loop.Timer], isLive: (Loop.Timer, UInt64) -> Bool) -> ContinuousClock.Instant? {
        while let top = byDeadline.min, !isLive(top.timer, top.generation) { discarded.append(byDeadline.removeMin().timer) }
        return byDeadline.min?.deadline
    }

    mutating func removeAll() {
        byInstant = Heap()
        byDeadline = Heap()
    }
}
