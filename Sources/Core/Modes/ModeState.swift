/// The items of one mode.
struct ModeState {
    var versionZero: [ObjectIdentifier: Loop.Source] = [:]
    var versionOne: [ObjectIdentifier: Loop.Source] = [:]
    /// The version-1 sources' descriptors, for the registrar.
    var watched = WatchedDescriptors()
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

    /// The first live timer due at or before `limit` (nanoseconds on ``QueueTime``'s scale)
    /// and queued before `step` began, removed from the queue, with its entry's generation and
    /// instant.
    mutating func popDueTimer(notAfter limit: Int64, step: UInt64) -> (Loop.Timer, UInt64, Int64)? {
        let (timers, leftAt) = (self.timers, timersLeftAt)
        return timerQueue.popDue(notAfter: limit, step: step) { ModeState.timer(for: $0, in: timers, leftAt: leftAt) }
    }

    /// Begins a timer step (see ``TimerQueue``) when a live timer is due by `limit`; returns
    /// its mark, or `nil` when nothing is due.
    mutating func beginTimerStep(dueBy limit: Int64) -> UInt64? {
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

    /// Queues `timer` (already in ``timers``) at `instant` with `tolerance` (nanoseconds on
    /// ``QueueTime``'s scale, rounded up), as arming `generation`.
    mutating func queue(_ timer: Loop.Timer, at instant: Int64, tolerance: Int64, generation: UInt64) {
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
    /// tolerance of the timer that sets it, in nanoseconds on ``QueueTime``'s scale.
    ///
    /// Entries an enclosing timer step set aside go back to the queue first: a run nested in
    /// a timer's callback serves them (its pass is a later pass), so one already due must not
    /// be slept through (an exact timer's only entry is the set-aside one).
    mutating func timerDeadline() -> (deadline: Int64, tolerance: Int64)? {
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
