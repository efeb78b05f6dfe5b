/// Everything about a loop that other threads may read or change, guarded by its mutex.
struct LoopState {
    var modes = ModeTable()
    var commonModes: Set<Loop.Mode> = [.default]
    /// Items added to ``Loop/Mode/common``, in the order added, for modes made common later.
    var commonSources = CommonItems<Loop.Source>()
    var commonTimers = CommonItems<Loop.Timer>()
    var commonObservers = CommonItems<Loop.Observer>()
    /// Version-0 sources of this loop that were signalled and may still be waiting to run.
    var signalled: [Loop.Source] = []
    var runs: [RunRecord] = []
    /// When the current sleep ends by itself, in nanoseconds on ``QueueTime``'s scale; `nil`
    /// sleeps until an event.
    var sleepDeadline: Int64?
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

    /// Whether `mode` has no source and no timer, and does not serve the dispatch main queue
    /// (its blocks are the block queue's, which ``Loop/hasNothingQueued(in:_:)`` asks too).
    func hasNoItems(in mode: Loop.Mode) -> Bool {
        if watchesMainQueue(in: mode) { return false }
        return modes.read(mode, { $0.hasSourcesOrTimers }) != true
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

    /// Whether `source` is still in any mode of this loop.
    func containsAnywhere(_ source: Loop.Source) -> Bool {
        modes.containsMode { $0.contains(source) }
    }
}
