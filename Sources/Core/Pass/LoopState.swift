import DequeModule

/// The items of one mode.
struct ModeState {
    var versionZero: [ObjectIdentifier: Loop.Source] = [:]
    var versionOne: [ObjectIdentifier: Loop.Source] = [:]
    /// The version-1 sources by descriptor, each list in the order its sources joined: what
    /// the backend must watch while this mode runs.
    var descriptorSources: [Int32: [Loop.Source]] = [:]
    /// Descriptors whose list of sources changed since the registrations were last brought in
    /// line with this mode: when this mode stays registered, only these need looking at, so
    /// that adding or removing one of 10,000 sources costs one descriptor's work, not 10,000.
    var changedDescriptors: Set<Int32> = []
    var timers: [ObjectIdentifier: Loop.Timer] = [:]
    var timerQueue = TimerQueue()
    /// When each timer that left this mode (and may join it again) left, on the timer queue's
    /// clock: its entries queued before then are stale, even once it is back with the same
    /// generation. Emptied whenever the queue is compacted (no such entry is left then).
    var timersLeftAt: [ObjectIdentifier: UInt64] = [:]
    /// Sorted by order; equal orders keep the order they were added in.
    var observers: [Loop.Observer] = []

    /// How many of ``timers`` do not keep the mode alive: the jobs of tasks' sleeps, which a
    /// cancelled sleep cannot take back (see `Loop+SchedulingExecutor.swift`).
    var timersNotKeepingAlive = 0

    /// Whether the mode has an item that keeps a run in it going (a timer that does not keep
    /// the mode alive does not count).
    var hasSourcesOrTimers: Bool {
        !versionZero.isEmpty || !versionOne.isEmpty || timers.count > timersNotKeepingAlive
    }

    func contains(_ source: Loop.Source) -> Bool {
        (source.isVersion0 ? versionZero : versionOne)[ObjectIdentifier(source)] != nil
    }

    /// The first live timer due at or before `limit` and queued before `step` began, removed
    /// from the queue.
    mutating func popDueTimer(notAfter limit: ContinuousClock.Instant, step: UInt64) -> (Loop.Timer, UInt64)? {
        let (timers, leftAt) = (self.timers, timersLeftAt)
        return timerQueue.popDue(notAfter: limit, step: step) { ModeState.timer(for: $0, in: timers, leftAt: leftAt) }
    }

    /// Begins a timer step (see ``TimerQueue``) when a live timer is due by `limit`; returns
    /// its mark, or `nil` when nothing is due.
    mutating func beginTimerStep(dueBy limit: ContinuousClock.Instant) -> UInt64? {
        let step = timerQueue.beginStep()
        let (timers, leftAt) = (self.timers, timersLeftAt)
        return timerQueue.hasDue(notAfter: limit) { ModeState.timer(for: $0, in: timers, leftAt: leftAt) } ? step : nil
    }

    /// Adds `timer` (whose identifier is `id`) unless it is here already, then runs `joined`
    /// on this mode; returns whether it joined. One dictionary lookup: a million timers
    /// added are a million lookups into a large table, each likely a cache miss.
    mutating func join(_ timer: Loop.Timer, id: ObjectIdentifier, then joined: (inout ModeState) -> Void) -> Bool {
        guard timers.updateValue(timer, forKey: id) == nil else { return false }
        if !timer.keepsModeAlive { timersNotKeepingAlive += 1 }
        joined(&self)
        return true
    }

    /// Queues `timer` (already in ``timers``) at `instant`, as arming `generation`.
    mutating func queue(
        _ timer: Loop.Timer, at instant: ContinuousClock.Instant, tolerance: Duration, generation: UInt64
    ) {
        timerQueue.insert(timer, at: instant, tolerance: tolerance, generation: generation)
        compactTimerQueue()
    }

    /// Takes `timer` out of this mode; its queued entries are stale from now on, also if it
    /// joins again (`invalidated`: it never will, so nothing needs remembering).
    mutating func removeTimer(_ timer: ObjectIdentifier, invalidated: Bool = false) {
        guard let removed = timers.removeValue(forKey: timer) else { return }
        if !removed.keepsModeAlive { timersNotKeepingAlive -= 1 }
        if !invalidated { timersLeftAt[timer] = timerQueue.lastQueued }
        compactTimerQueue()
    }

    private mutating func compactTimerQueue() {
        guard timerQueue.isMostlyStale(liveCount: timers.count) else { return }
        let (timers, leftAt) = (self.timers, timersLeftAt)
        timerQueue.compact { ModeState.timer(for: $0, in: timers, leftAt: leftAt) }
        timersLeftAt.removeAll()
    }

    /// When the loop must wake to serve this mode's timers within their tolerances, and the
    /// tolerance of the timer that sets it.
    ///
    /// Entries an enclosing timer step set aside go back to the queue first: a run nested in
    /// a timer's callback serves them (its pass is a later pass), so one already due must not
    /// be slept through (an exact timer's only entry is the set-aside one).
    mutating func timerDeadline() -> (instant: ContinuousClock.Instant, tolerance: Duration)? {
        timerQueue.endStep()
        let (timers, leftAt) = (self.timers, timersLeftAt)
        return timerQueue.earliestDeadline { ModeState.timer(for: $0, in: timers, leftAt: leftAt) }
    }

    /// The timer a queue entry stands for, if the entry is still current.
    private static func timer(
        for key: TimerQueue.Key, in timers: [ObjectIdentifier: Loop.Timer],
        leftAt: [ObjectIdentifier: UInt64]
    ) -> Loop.Timer? {
        guard let timer = timers[key.object], timer.identity == key.identity,
            timer.generation.load(ordering: .acquiring) == key.generation
        else { return nil }
        if !leftAt.isEmpty, let left = leftAt[key.object], key.queuedAt <= left { return nil }
        return timer
    }

    /// Inserts `observer` after those of lower or equal order; no effect if present.
    mutating func insertObserver(_ observer: Loop.Observer) {
        guard !observers.contains(observer) else { return }
        let index = observers.firstIndex { $0.order > observer.order } ?? observers.endIndex
        observers.insert(observer, at: index)
    }
}

/// Which modes a queued block runs in.
enum BlockModes {
    /// The common modes at the time the block is drained.
    case common
    /// The modes whose numbers are the set bits (``Mode/common``'s bit stands for the common
    /// modes at the time the block is drained): every mode of a program that uses fewer than
    /// 64 modes. A post tests and a drain matches a block with a mask, not a hash.
    case mask(UInt64)
    /// Modes beyond the mask's reach.
    case some(Set<Loop.Mode>)

    /// `modes`, as a mask when every mode fits in one.
    init(_ modes: Loop.ModeSet) {
        guard modes.others.isEmpty else {
            self = .some(Set(modes.modes))
            return
        }
        self = modes.mask == Loop.Mode.common.bit ? .common : .mask(modes.mask)
    }
}

extension Loop.Mode {
    /// The mode's bit in a ``BlockModes/mask(_:)``, if its number has one.
    var bit: UInt64? { index < 64 ? 1 << UInt64(index) : nil }
}

/// A block queued by ``Loop/perform(in:_:)``.
struct PendingBlock {
    let modes: BlockModes
    /// The work. A caller that must learn when a block is dropped without running (the loop
    /// torn down with it still queued) has the closure capture an object whose `deinit` tells
    /// it (`LoopThread`'s waiting `perform`): every queued block costs two words, not a third
    /// for a handler almost none has.
    let body: @Sendable () -> Void
}

/// One active run of the loop; the innermost is last.
struct RunRecord {
    /// What drives the run.
    enum Kind {
        /// A `run` call.
        case run
        /// A host loop, from ``Loop/prepareForHost(in:)`` until its ``Loop/dispatchForHost()``
        /// has run its pass (or ``Loop/cancelHostWait()``): for other threads the loop runs
        /// then, so `wakeUp()` and `stop()` act on it (W1, W2), and ``LoopState/currentMode``
        /// is the host's mode.
        case hostWait
    }

    var mode: Loop.Mode
    var kind: Kind = .run
    var stopped = false
}

/// Everything about a loop that other threads may read or change, guarded by its mutex.
struct LoopState {
    var modes = ModeTable()
    var commonModes: Set<Loop.Mode> = [.default]
    /// Items added to ``Loop/Mode/common``, in the order added, for modes made common later.
    var commonSources = CommonItems<Loop.Source>()
    var commonTimers = CommonItems<Loop.Timer>()
    var commonObservers = CommonItems<Loop.Observer>()
    let blocks: BlockQueue
    let sleep: SleepGate
    /// Version-0 sources of this loop that were signalled and may still be waiting to run.
    var signalled: [Loop.Source] = []
    var runs: [RunRecord] = []
    /// When the current sleep ends by itself; `nil` sleeps until an event.
    var sleepDeadline: ContinuousClock.Instant?
    /// The sleeping run is nested in a block drain whose batch holds a block that would run
    /// in the run's mode were it common (loop-thread state, published here as the loop decides
    /// to sleep): making that mode common must wake the loop for it.
    var sleepHoldsBlocksForCommonModes = false
    var isTornDown = false
    /// This is the main thread's loop, whose common modes stand for the dispatch main queue.
    var servesMainQueue = false
    /// The main loop is inside `_dispatch_main_queue_callback_4CF`: a run nested in a
    /// main-queue block cannot serve the queue.
    var isDrainingMainQueue = false

    /// The mode the loop serves now: its innermost run's (a host's wait is a run).
    var currentMode: Loop.Mode? { runs.last?.mode }

    /// Expands ``Loop/Mode/common`` to the common modes.
    func targets(of mode: Loop.Mode) -> [Loop.Mode] {
        mode == .common ? Array(commonModes) : [mode]
    }

    /// A mode is empty when it has no source, no timer and no block queued for it.
    func isEmpty(_ mode: Loop.Mode) -> Bool {
        if watchesMainQueue(in: mode) { return false }
        if modes.read(mode, { $0.hasSourcesOrTimers }) == true { return false }
        return !blocks.hasBlock(runningIn: mode, commonModes: commonModes)
    }

    /// Whether a run in `mode` serves the dispatch main queue: on the main loop, in its common
    /// modes, except inside a main-queue drain.
    func watchesMainQueue(in mode: Loop.Mode) -> Bool {
        servesMainQueue && !isDrainingMainQueue && commonModes.contains(mode)
    }

    /// Work, other than blocks and wakes, that must stop the loop from sleeping in `mode`
    /// (blocks are looked for after the loop has published that it sleeps; see ``SleepGate``).
    func hasPendingWork(in mode: Loop.Mode) -> Bool {
        if runs.last?.stopped == true { return true }
        guard !signalled.isEmpty else { return false }
        return modes.read(mode) { state in signalled.contains { $0.isSignalled && state.contains($0) } } ?? false
    }

    /// Whether the sleeping loop must wake because its mode has just become empty, so that
    /// the run ends now instead of at its next timer or timeout.
    func sleepingModeEmptied() -> Bool {
        guard sleep.isAsleep, let mode = currentMode else { return false }
        return isEmpty(mode)
    }

    /// Whether `source` is still in any mode of this loop.
    func containsAnywhere(_ source: Loop.Source) -> Bool {
        modes.containsMode { $0.contains(source) }
    }
}

extension Dictionary {
    /// Runs `update` on the value for `key` in place, if there is one.
    ///
    /// `dictionary[key]?.mutatingMethod()` goes through the optional subscript's modify
    /// accessor, which allocates on every call (measured: three allocations each); a pass
    /// makes several such calls. Updating through the value's position allocates nothing.
    mutating func update<R>(_ key: Key, _ update: (inout Value) -> R) -> R? {
        guard let index = index(forKey: key) else { return nil }
        return update(&values[index])
    }
}
