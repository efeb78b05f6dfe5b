import HeapModule

/// The timers of one mode, by the instant they are due.
///
/// Deletion is lazy, with a generation count: re-arming or invalidating a timer bumps its
/// generation and pushes a fresh entry; entries whose generation no longer matches (or whose
/// timer left the mode) are stale, and are discarded when they reach the top or when the queue
/// is compacted. Compaction runs when stale entries outnumber live ones, so a timer re-armed a
/// million times (a watchdog reset per packet) leaves the queue at its live size, and add,
/// re-arm and invalidate stay O(log n) amortized with swift-collections' `Heap`, which cannot
/// remove an arbitrary element.
///
/// Timers with no tolerance, most of them, are kept apart from those with one: their instant
/// is their deadline, so one heap answers both "what is due" and "until when may the loop
/// sleep", and queueing or firing one sifts a single heap. Timers with a tolerance need a
/// second heap by deadline. Due timers are taken from whichever instant heap's top is first.
///
/// Entries are plain integers: instants as nanoseconds on ``QueueTime``'s scale, so that the
/// heap compares and moves fixed-size values instead of going through the value witnesses of
/// `ContinuousClock.Instant` (a resilient type) at every step of a sift.
///
/// A timer step (the timers a pass fires) serves the entries queued before it began: a timer
/// re-armed or added during the step's callbacks waits for a later pass, even when its new
/// instant is already due. Such entries are set aside during the step and put back at its end
/// (or when a run nested in a callback begins its own step, or plans its sleep: its pass is a
/// later pass).
///
/// Entries hold no reference to their timer, only its identity: the heap's sifting then copies
/// plain values (no retain/release), and dropping a stale entry can never free a timer while
/// the loop's lock is held. A live entry's timer is found through the mode, which owns it.
struct TimerQueue {
    /// Who an entry is for: the timer's object identifier, checked against its process-unique
    /// identity so a reused address is never mistaken for the old timer.
    struct Key: Equatable {
        let object: ObjectIdentifier
        let identity: UInt64
        let generation: UInt64
        /// When it was queued, on this queue's own count (``lastQueued``): entries queued
        /// after a step began are not served by that step, and entries queued before their
        /// timer last left the mode are stale.
        let queuedAt: UInt64
    }

    struct Entry: Comparable {
        /// The fire instant, on ``QueueTime``'s scale (rounded up: never early).
        let instant: Int64
        let order: Int
        let sequence: UInt64
        /// The timer has no tolerance: the entry lives in ``TimerQueue/exact``.
        let isExact: Bool
        let key: Key

        static func < (a: Entry, b: Entry) -> Bool {
            if a.instant != b.instant { return a.instant < b.instant }
            if a.order != b.order { return a.order < b.order }
            return a.sequence < b.sequence
        }

        static func == (a: Entry, b: Entry) -> Bool {
            a.instant == b.instant && a.order == b.order && a.sequence == b.sequence
        }
    }

    /// Latest acceptable firing time of a timer: its instant plus its tolerance.
    struct Deadline: Comparable {
        let deadline: Int64
        /// The timer's tolerance in nanoseconds: how much timer slack the wait this bounds may
        /// have.
        let tolerance: Int64
        let key: Key

        static func < (a: Deadline, b: Deadline) -> Bool { a.deadline < b.deadline }
        static func == (a: Deadline, b: Deadline) -> Bool { a.deadline == b.deadline }
    }

    /// Entries of timers with no tolerance, by instant: each is due at its own deadline, so
    /// one heap serves both questions (most timers have no tolerance, and then a queue
    /// operation sifts one heap, not two).
    private var exact = Heap<Entry>()
    /// Entries of timers with a tolerance, by instant.
    private var tolerant = Heap<Entry>()
    /// The same entries by instant + tolerance: with ``exact``, what the loop's sleep is
    /// bounded by.
    private var byDeadline = Heap<Deadline>()
    /// Entries queued during the current step, set aside until it ends.
    private var setAside: [Entry] = []
    /// How many entries were ever queued: the clock of `queuedAt`.
    private var queued: UInt64 = 0

    /// Queues `timer` at `instant` with `tolerance`, in nanoseconds on ``QueueTime``'s scale
    /// (rounded up by the caller: nothing is taken for due early); `generation` identifies
    /// this arming.
    mutating func insert(_ timer: Loop.Timer, at instant: Int64, tolerance: Int64, generation: UInt64) {
        queued += 1
        let key = Key(
            object: ObjectIdentifier(timer), identity: timer.identity, generation: generation, queuedAt: queued)
        let entry = Entry(
            instant: instant, order: timer.order, sequence: timer.addSequence.load(ordering: .relaxed),
            isExact: tolerance == 0, key: key)
        guard !entry.isExact else {
            exact.insert(entry)
            return
        }
        tolerant.insert(entry)
        byDeadline.insert(Deadline(deadline: instant.addingSaturating(tolerance), tolerance: tolerance, key: key))
    }

    /// Drops every stale entry, from the heaps and from the entries set aside: O(n), done
    /// once ``isMostlyStale(liveCount:)`` (after at least n/2 stale entries accumulated), so
    /// O(1) amortized per entry queued.
    mutating func compact(live: (Key) -> Loop.Timer?) {
        exact = Heap(exact.unordered.filter { live($0.key) != nil })
        tolerant = Heap(tolerant.unordered.filter { live($0.key) != nil })
        byDeadline = Heap(byDeadline.unordered.filter { live($0.key) != nil })
        setAside.removeAll { live($0.key) == nil }
    }

    /// The count of entries ever queued: the clock of ``Key/queuedAt``.
    var lastQueued: UInt64 { queued }

    /// Begins a timer step; returns its mark for ``popDue(notAfter:step:live:)``. Entries set
    /// aside by an enclosing step are served by this one (a nested run's pass is a later pass).
    mutating func beginStep() -> UInt64 {
        endStep()
        return queued
    }

    /// Ends a timer step: entries set aside during it are queued again.
    mutating func endStep() {
        // Called at every sleep decision too (a nested run's): nothing set aside is the rule.
        guard !setAside.isEmpty else { return }
        for entry in setAside {
            if entry.isExact { exact.insert(entry) } else { tolerant.insert(entry) }
        }
        setAside.removeAll(keepingCapacity: true)
    }

    /// Removes and returns the first live timer due at or before `limit` and queued before
    /// the step `step` began, with its generation.
    ///
    /// - Parameter live: the timer an entry's key stands for, or `nil` when the entry is stale.
    ///
    /// - Parameter limit: the time now, on ``QueueTime``'s scale, rounded down where instants
    ///   are rounded up (``LoopClock/nanoseconds``): a timer is never taken for due early.
    /// - Returns: the timer, the generation its entry was queued as, and the entry's instant.
    mutating func popDue(
        notAfter limit: Int64, step: UInt64, live: (Key) -> Loop.Timer?
    ) -> (Loop.Timer, UInt64, Int64)? {
        // The timer popped last has fired or been re-armed since: its deadline entry is stale
        // now. Dropping stale deadlines here keeps that heap as small as the other while a
        // step fires many timers, instead of letting it grow until a compaction rebuilds all.
        while let top = byDeadline.min, live(top.key) == nil { byDeadline.removeMin() }
        while let (top, timer, isExact) = liveTop(live: live) {
            guard top.instant <= limit else { return nil }
            if isExact { exact.removeMin() } else { tolerant.removeMin() }
            if top.key.queuedAt > step {
                setAside.append(top)
                continue
            }
            return (timer, top.key.generation, top.instant)
        }
        return nil
    }

    /// Whether a live entry is due at or before `limit` (stale entries on top are dropped).
    mutating func hasDue(notAfter limit: Int64, live: (Key) -> Loop.Timer?) -> Bool {
        liveTop(live: live).map { $0.entry.instant <= limit } ?? false
    }

    /// The first live entry by instant, of either heap, with its timer; stale entries on top
    /// of either are dropped.
    private mutating func liveTop(live: (Key) -> Loop.Timer?) -> (entry: Entry, timer: Loop.Timer, isExact: Bool)? {
        switch (Self.liveTop(of: &exact, live: live), Self.liveTop(of: &tolerant, live: live)) {
        case (nil, nil): return nil
        case let ((entry, timer)?, nil): return (entry, timer, true)
        case let (nil, (entry, timer)?): return (entry, timer, false)
        case let ((exactEntry, exactTimer)?, (tolerantEntry, tolerantTimer)?):
            return exactEntry < tolerantEntry ? (exactEntry, exactTimer, true) : (tolerantEntry, tolerantTimer, false)
        }
    }

    /// The first live entry of `heap` and its timer, once the stale entries on top are dropped.
    private static func liveTop(of heap: inout Heap<Entry>, live: (Key) -> Loop.Timer?) -> (Entry, Loop.Timer)? {
        while let top = heap.min {
            if let timer = live(top.key) { return (top, timer) }
            heap.removeMin()
        }
        return nil
    }

    /// The latest time the loop may wake and still serve every timer within its tolerance,
    /// and the tolerance of the timer that sets it, in nanoseconds on ``QueueTime``'s scale.
    mutating func earliestDeadline(live: (Key) -> Loop.Timer?) -> (deadline: Int64, tolerance: Int64)? {
        while let top = byDeadline.min, live(top.key) == nil { byDeadline.removeMin() }
        switch (Self.liveTop(of: &exact, live: live)?.0, byDeadline.min) {
        case (nil, nil): return nil
        case let (exact?, nil): return (exact.instant, 0)
        case let (nil, tolerant?): return (tolerant.deadline, tolerant.tolerance)
        case let (exact?, tolerant?):
            return exact.instant <= tolerant.deadline ? (exact.instant, 0) : (tolerant.deadline, tolerant.tolerance)
        }
    }

    /// At most the instant of every entry, live or stale (`Int64.max` when there is none).
    var lowerBound: Int64 {
        min(exact.min?.instant ?? .max, tolerant.min?.instant ?? .max, setAside.lazy.map(\.instant).min() ?? .max)
    }

    /// Whether the stale entries outnumber the `liveCount` live ones (plus some slack, so
    /// that a small queue is never rebuilt over and over).
    func isMostlyStale(liveCount: Int) -> Bool {
        let limit = 2 * liveCount + 64
        return exact.count + tolerant.count > limit || byDeadline.count > limit
    }

    /// How many entries the queue holds, live or stale (for tests of compaction).
    var entryCount: Int { exact.count + tolerant.count + setAside.count }
}
