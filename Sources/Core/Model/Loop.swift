import DequeModule
import Synchronization

/// A CFRunLoop-style run loop: one per thread, sleeping in its backend until there is work.
///
/// A loop serves the sources, timers, observers and blocks of the mode it runs in. It is run
/// only on its own thread; everything else (adding and removing items, ``perform(_:)``,
/// ``wakeUp()``, ``stop()``) is safe from any thread. Get one with `Loop.current` or `Loop.main`
/// (from `RunLoopKit`), which create it on first use.
public final class Loop: Sendable, CustomStringConvertible {
    /// The backend this loop waits on.
    public let backend: BackendKind
    /// Whether this is the main thread's loop.
    public let isMain: Bool

    let state: Lock<LoopState>
    let blocks = BlockQueue()
    /// How the loop sleeps and other threads wake it (see ``SleepGate``).
    let sleep: SleepGate
    /// The backend and what is registered in it; see ``Registrar`` for who may touch them when.
    let registrar: Registrar
    #if DEBUG
    /// Touched only on the loop's own thread, which debug builds check at every use (see
    /// `ThreadLocalState.assertConfined(to:)`).
    var local: ThreadLocalState {
        localStorage.assertConfined(to: self)
        return localStorage
    }
    private let localStorage = ThreadLocalState()
    #else
    /// Touched only on the loop's own thread. A stored constant in release builds: a computed
    /// property returning it would retain and release it at every use in a pass.
    let local = ThreadLocalState()
    #endif
    let counters = LoopCounters()
    /// What the loop is doing now, for stall monitors.
    let progress = LoopProgress()
    /// Where the loop reads the time.
    let clock: LoopClock
    /// Bumped whenever a mode is made common: a drain re-reads the common modes then.
    let commonModesVersion = Atomic<UInt64>(0)
    /// Set once any observer was added: until then a notification costs no lock.
    let hasHadObservers = Atomic<Bool>(false)
    /// Bumped (under the state lock) whenever any mode's observers change: the loop's
    /// thread keeps the observers it last notified until then.
    let observersVersion = Atomic<UInt64>(0)
    /// `wakeUp()` was called while the loop was awake and no wait has consumed it yet.
    let wakeRequested = Atomic<Bool>(false)
    /// The version-1 sources changed since the backend was last told. Set under the state
    /// lock; the loop's thread reads it without the lock to skip an unchanged sync.
    let descriptorsChanged = Atomic<Bool>(true)
    /// Some version-0 source may be signalled (set under the state lock with the list of
    /// signalled sources; cleared under it when that list empties): a pass with nothing
    /// signalled does not take the lock to find out.
    let maybeSignalled = Atomic<Bool>(false)
    /// No timer of any mode is queued before this bound: a pass due nothing skips the lock.
    let timerBound = TimerBound()
    /// The thread the loop belongs to, once bound, for messages naming it (``LoopBound``).
    let ownerThread = OwnerThread()
    /// The backend serves sources of its own (GLib's): every wait reaches it, and its callbacks
    /// run as a phase of the pass (see ``Backend/servesOwnSources``).
    let backendServesOwnSources: Bool
    /// What a host loop can wait on for this loop (constant for a backend's life).
    let embedding: EmbeddingSupport
    /// Objects other modules of the package keep for this loop (see ``LoopAttachment``).
    let attachments = LoopAttachments()
    /// The loop's weak reference to itself, for its whole life (see ``WeakLoop``): written once,
    /// in `init`, before the loop is shared, and never read.
    nonisolated(unsafe) private var selfReference = WeakLoop()

    init(backend: any Backend, isMain: Bool, clock: LoopClock = .continuous) {
        self.backend = backend.kind
        self.backendServesOwnSources = backend.servesOwnSources
        self.embedding = backend.embedding
        self.isMain = isMain
        self.clock = clock
        let gate = SleepGate(waker: backend.waker)
        self.sleep = gate
        var initial = LoopState(blocks: blocks, sleep: gate)
        initial.servesMainQueue = isMain
        self.state = Lock(initial, rank: .loopState)
        self.registrar = Registrar(backend: backend)
        selfReference = WeakLoop(loop: self)
    }

    /// Creates a loop over `backend` reading time from `clock`, bound to the calling thread
    /// as its current loop (for Core's own tests: a scripted backend and a virtual clock).
    ///
    /// Traps if the thread already has a loop.
    package static func makeBoundToCurrentThread(backend: any Backend, clock: LoopClock) -> Loop {
        precondition(currentIfCreated == nil, "Loop.makeBoundToCurrentThread: this thread already has a loop")
        let loop = Loop(backend: backend, isMain: false, clock: clock)
        ThreadBinding.bind(loop)
        return loop
    }

    /// The backend's waker, for tests that deliver a wake no one claimed (as a late write from
    /// an earlier sleep would).
    package var backendWaker: any BackendWaker { sleep.waker }

    #if DEBUG
    /// For tests, in debug builds only: touches the loop-thread-only state, as a bug reaching
    /// it from another thread would.
    package func touchLoopThreadState() { _ = local }

    /// For tests, in debug builds only: `hook` runs in every poster's wake between seeing
    /// the loop asleep and claiming that sleep's wake (`nil` removes it).
    package func holdWakesAfterSeeingSleep(_ hook: (@Sendable () -> Void)?) {
        sleep.afterSeeingSleep.withLock { $0 = hook }
    }
    #endif

    /// The current instant on the loop's clock.
    var now: ContinuousClock.Instant { clock.now() }

    /// How many descriptors the loop has registered in its backend for version-1 sources (not
    /// its waker nor the dispatch main queue). Safe to call from any thread.
    package var registeredDescriptorCount: Int { registrar.registeredCount.load(ordering: .relaxed) }

    /// How many entries `mode`'s timer queue holds, live or stale (for tests that memory stays
    /// flat when timers are re-armed or invalidated). Safe to call from any thread.
    package func timerQueueEntryCount(in mode: Mode) -> Int {
        state.withLock { $0.modes.read(mode) { $0.timerQueue.entryCount } ?? 0 }
    }

    /// The loop's backend, and whether it is the main loop, for messages: `Loop(epoll, main)`.
    public var description: String { "Loop(\(backend)\(isMain ? ", main" : ""))" }

    // MARK: - State

    /// The mode of the innermost active run, or the mode a host loop waits for this loop in
    /// (between ``prepareForHost(in:)`` and ``dispatchForHost()``, while it sleeps), or `nil`
    /// when the loop is not running.
    ///
    /// Safe to call from any thread.
    public var currentMode: Mode? { state.withLock { $0.currentMode } }

    /// Whether the loop is asleep in its backend, waiting for work.
    ///
    /// Safe to call from any thread.
    public var isWaiting: Bool { sleep.isAsleep }

    /// The common modes (initially just ``Mode/default``). Safe to call from any thread.
    public var commonModes: Set<Mode> { state.withLock { $0.commonModes } }

    /// Makes `mode` common: it receives every item added to ``Mode/common``, now and later.
    ///
    /// The mode is created if it did not exist. Safe to call from any thread.
    public func addCommonMode(_ mode: Mode) {
        guard mode != .common else { return }
        let (sources, timers, wake): ([Source], [Timer], Bool) = state.withLock { state in
            guard !state.isTornDown, state.commonModes.insert(mode).inserted else { return ([], [], false) }
            commonModesVersion.add(1, ordering: .releasing)
            if !state.modes.contains(mode) { state.modes[mode] = ModeState() }
            for observer in state.commonObservers.inOrder where observer.isValid {
                _ = state.modes.update(mode) { $0.insertObserver(observer) }
            }
            // A block queued for the common modes now runs in `mode` too: a loop asleep in
            // `mode` must wake for it, whether the block is still queued or held in the batch
            // of a drain the sleeping run is nested in. (The loop decides to sleep under this
            // lock, so it either saw the new common mode or is seen asleep here.)
            observersVersion.add(1, ordering: .releasing)
            let wake =
                state.currentMode == mode
                && (state.sleepHoldsBlocksForCommonModes
                    || blocks.hasBlock(runningIn: mode, commonModes: state.commonModes))
            return (state.commonSources.inOrder, state.commonTimers.inOrder, wake)
        }
        if wake { sleep.wake() }
        // Each timer and source joins the way `add(_:to:)` adds it, under its own lock first
        // (a timer's or source's lock comes before the loop's): one that was invalidated or
        // removed from the common modes meanwhile stays out.
        for timer in timers {
            attach(timer) { state in
                state.commonModes.contains(mode) && state.commonTimers.contains(timer) ? [mode] : []
            }
        }
        for source in sources {
            attach(source) { state in
                state.commonModes.contains(mode) && state.commonSources.contains(source) ? [mode] : []
            }
        }
    }

    // MARK: - Sources

    /// Adds `source` to `mode` (to every common mode for ``Mode/common``).
    ///
    /// Adding a source to a mode it is in, or adding an invalidated source, has no effect. The
    /// source's `schedule` callback runs once per mode it joins, on the calling thread (or, when
    /// another thread is making this source's callouts at that moment, on that thread, right
    /// after its own: `schedule` and `cancel` are always called in the order the source joined
    /// and left its modes). Adding a source whose handler is main-actor code to a loop other
    /// than `Loop.main` traps with a message. Safe to call from any thread.
    public func add(_ source: Source, to mode: Mode) {
        source.isolation.admit(source, to: self, by: "Loop.add(_:to:)")
        attach(source) { state in
            if mode == .common { state.commonSources.insert(source) }
            return state.targets(of: mode)
        }
    }

    /// Puts `source` into the modes `targets` names (picked under the loop's lock), unless it
    /// was invalidated; the one path by which a source joins a mode.
    private func attach(_ source: Source, targets: (inout LoopState) -> [Mode]) {
        let wake: Bool = source.loops.withLock { loops in
            guard source.isValid else { return false }
            let (added, wake): ([Mode], Bool) = state.withLock { state in
                guard !state.isTornDown else { return ([], false) }
                var added: [Mode] = []
                for target in targets(&state) where state.modes[target, default: ModeState()].insert(source) {
                    added.append(target)
                }
                guard !added.isEmpty else { return ([], false) }
                // A source signalled while in no mode of this loop is performed once it joins.
                if source.isVersion0, source.isSignalled, !state.signalled.contains(source) {
                    state.signalled.append(source)
                    maybeSignalled.store(true, ordering: .releasing)
                }
                if !source.isVersion0 { descriptorsChanged.store(true, ordering: .releasing) }
                let wake =
                    state.currentMode.map { added.contains($0) && (!source.isVersion0 || source.isSignalled) } ?? false
                return (added, wake)
            }
            if !added.isEmpty {
                loops[ObjectIdentifier(self)] = WeakLoop(loop: self)
                source.queueCallouts(joined: true, loop: self, modes: added)
            }
            return wake
        }
        if wake { sleep.wake() }
        source.makeQueuedCallouts()
    }

    /// Removes `source` from `mode` (from every common mode for ``Mode/common``).
    ///
    /// A descriptor no mode's source needs any more leaves the backend before this returns, so
    /// the caller may close it right away. The source's `cancel` callback runs once per mode
    /// it leaves (on which thread: see `add(_:to:)`). Safe to call from any thread.
    public func remove(_ source: Source, from mode: Mode) {
        let (removed, wake): ([Mode], Bool) = source.loops.withLock { loops in
            let (removed, stillMember, wake): ([Mode], Bool, Bool) = state.withLock { state in
                if mode == .common { state.commonSources.remove(source) }
                var removed: [Mode] = []
                for target in state.targets(of: mode) where state.modes[target]?.remove(source) == true {
                    removed.append(target)
                }
                if !source.isVersion0, !removed.isEmpty { descriptorsChanged.store(true, ordering: .releasing) }
                // Still a member while in the common set, though in no mode: invalidate must
                // find this loop to take it out of that set.
                let stillMember = state.containsAnywhere(source) || state.commonSources.contains(source)
                return (removed, stillMember, state.sleepingModeEmptied())
            }
            if !stillMember { loops[ObjectIdentifier(self)] = nil }
            source.queueCallouts(joined: false, loop: self, modes: removed)
            return (removed, wake)
        }
        if wake { sleep.wake() }
        if !source.isVersion0, !removed.isEmpty { releaseRemovedDescriptors() }
        source.makeQueuedCallouts()
    }

    /// Whether `source` is in `mode` (for ``Mode/common``: was added to the common modes).
    ///
    /// Safe to call from any thread.
    public func contains(_ source: Source, in mode: Mode) -> Bool {
        state.withLock { state in
            mode == .common
                ? state.commonSources.contains(source) : state.modes.read(mode) { $0.contains(source) } == true
        }
    }

    // MARK: - Timers

    /// Adds `timer` to `mode` (to every common mode for ``Mode/common``).
    ///
    /// A timer belongs to one loop: adding it to a second loop is a programming error that
    /// traps with a message, and so does adding a timer whose handler is main-actor code to a
    /// loop other than `Loop.main`. A fire instant already past becomes now. Adding an
    /// invalidated timer has no effect. Safe to call from any thread.
    public func add(_ timer: Timer, to mode: Mode) {
        timer.isolation.admit(timer, to: self, by: "Loop.add(_:to:)")
        attach(timer) { state in
            if mode == .common { state.commonTimers.insert(timer) }
            return state.targets(of: mode)
        }
    }

    /// Puts `timer` into the modes `targets` names (picked under the loop's lock), unless it
    /// was invalidated; the one path by which a timer joins a mode.
    private func attach(_ timer: Timer, targets: (inout LoopState) -> [Mode]) {
        let wake: Bool = timer.state.withLock { timerState in
            guard timer.isValid else { return false }
            if timerState.isBound, let owner = timerState.loop.loop, owner !== self {
                preconditionFailure(
                    "Loop.add(_:to:): \(timer) already belongs to \(owner); a timer can be added to one loop only")
            }
            timerState.isBound = true
            timerState.loop = WeakLoop(loop: self)
            if timer.addSequence.load(ordering: .relaxed) == 0 {
                timer.addSequence.store(Ordinal.next(), ordering: .relaxed)
            }
            return state.withLock { state in
                guard !state.isTornDown else { return false }
                let id = ObjectIdentifier(timer)
                // Clamped only when it first joins this loop's modes (through add or a mode
                // made common): a timer already queued and overdue is simply due. Clamping
                // re-anchors a repeating timer's grid.
                if !timerState.isFiring, !state.modes.containsMode(where: { $0.timers[id] != nil }) {
                    let now = self.now
                    if timerState.fireInstant < now {
                        timerState.fireInstant = now
                        timer.generation.add(1, ordering: .acquiringAndReleasing)
                    }
                }
                let generation = timer.generation.load(ordering: .acquiring)
                let (instant, tolerance) = (timerState.fireInstant, timerState.tolerance)
                // A firing timer is queued again by the loop when its callback returns.
                let queues = !timerState.isFiring
                var wake = false
                for target in targets(&state) {
                    let joined = state.modes[target, default: ModeState()].join(timer, id: id) { modeState in
                        if queues { modeState.queue(timer, at: instant, tolerance: tolerance, generation: generation) }
                    }
                    if joined, queues { timerBound.lower(to: instant) }
                    if joined, state.currentMode == target,
                        state.sleepDeadline.map({ instant + tolerance < $0 }) ?? true
                    {
                        wake = true
                    }
                }
                return wake
            }
        }
        if wake { sleep.wake() }
    }

    /// Removes `timer` from `mode` (from every common mode for ``Mode/common``).
    ///
    /// The timer stays valid and bound to this loop. Safe to call from any thread.
    public func remove(_ timer: Timer, from mode: Mode) {
        let wake: Bool = state.withLock { state in
            if mode == .common { state.commonTimers.remove(timer) }
            for target in state.targets(of: mode) { state.modes[target]?.removeTimer(ObjectIdentifier(timer)) }
            return state.sleepingModeEmptied()
        }
        if wake { sleep.wake() }
    }

    /// Whether `timer` is in `mode` (for ``Mode/common``: was added to the common modes).
    ///
    /// Safe to call from any thread.
    public func contains(_ timer: Timer, in mode: Mode) -> Bool {
        state.withLock { state in
            mode == .common
                ? state.commonTimers.contains(timer)
                : state.modes.read(mode) { $0.timers[ObjectIdentifier(timer)] != nil } == true
        }
    }

    // MARK: - Observers

    /// Adds `observer` to `mode` (to every common mode for ``Mode/common``).
    ///
    /// An observer belongs to one loop: adding it to a second loop traps with a message, and so
    /// does adding one whose handler is main-actor code to a loop other than `Loop.main`. An
    /// observer added while its activity is being notified misses that notification. Safe to
    /// call from any thread.
    public func add(_ observer: Observer, to mode: Mode) {
        observer.isolation.admit(observer, to: self, by: "Loop.add(_:to:)")
        observer.loop.withLock { binding in
            guard observer.isValid else { return }
            if binding.isBound, let owner = binding.loop.loop, owner !== self {
                preconditionFailure(
                    "Loop.add(_:to:): \(observer) already belongs to \(owner); an observer can be added to one loop only"
                )
            }
            binding = (WeakLoop(loop: self), true)
            hasHadObservers.store(true, ordering: .releasing)
            state.withLock { state in
                guard !state.isTornDown else { return }
                if mode == .common { state.commonObservers.insert(observer) }
                observersVersion.add(1, ordering: .releasing)
                for target in state.targets(of: mode) {
                    state.modes[target, default: ModeState()].insertObserver(observer)
                }
            }
        }
    }

    /// Removes `observer` from `mode` (from every common mode for ``Mode/common``).
    ///
    /// Safe to call from any thread.
    public func remove(_ observer: Observer, from mode: Mode) {
        state.withLock { state in
            if mode == .common { state.commonObservers.remove(observer) }
            observersVersion.add(1, ordering: .releasing)
            for target in state.targets(of: mode) { state.modes[target]?.observers.removeAll { $0 === observer } }
        }
    }

    /// Whether `observer` is in `mode` (for ``Mode/common``: was added to the common modes).
    ///
    /// Safe to call from any thread.
    public func contains(_ observer: Observer, in mode: Mode) -> Bool {
        state.withLock { state in
            mode == .common
                ? state.commonObservers.contains(observer)
                : state.modes.read(mode) { $0.observers.contains(observer) } == true
        }
    }

    // MARK: - Blocks, wakeUp, stop

    /// Queues `block` to run on the loop's thread while it runs a common mode.
    ///
    /// Blocks run in the order queued. A sleeping loop is woken; posting to a busy loop costs
    /// no system call. A block posted to a loop whose thread has ended, or to the loop of a
    /// ``LoopThread`` once its ``LoopThread/stop()`` queued the block that ends it, is dropped
    /// without running (`LoopThread.perform` says so by returning false). Safe to call from any
    /// thread. (A block written `{ @MainActor in … }` goes to ``perform(_:isolation:)``.)
    public func perform(_ block: consuming @escaping @Sendable () -> Void) {
        enqueue(PendingBlock(modes: .common, body: block))
    }

    /// Queues `block` to run on the loop's thread while it runs one of `modes`.
    ///
    /// ``Mode/common`` in `modes` stands for the common modes at the time the block runs.
    /// Blocks run in the order queued, each mode's blocks only while that mode runs. An empty
    /// `modes` is a programming error that traps with a message. Safe to call from any thread.
    /// Write the modes as a literal, `perform(in: [.default]) { … }`: that costs no more
    /// than ``perform(_:)`` (see ``ModeSet``).
    public func perform(in modes: ModeSet, _ block: consuming @escaping @Sendable () -> Void) {
        precondition(!modes.isEmpty, "Loop.perform(in:_:) with no mode: the block could never run")
        enqueue(PendingBlock(modes: BlockModes(modes), body: block))
    }

    /// Queues `block` to run on the loop's thread while it runs one of `modes`; the same as
    /// the one taking a ``ModeSet``, for modes already in a `Set`.
    @_disfavoredOverload
    public func perform(in modes: Set<Mode>, _ block: @escaping @Sendable () -> Void) {
        perform(in: ModeSet(modes), block)
    }

    /// Queues `block`; false when the loop refused it (torn down, or sealed by
    /// `sealing`'s earlier use), and then the block is released without running.
    ///
    /// - Parameter sealing: make this the last block the loop accepts (``LoopThread/stop()``).
    @discardableResult
    func enqueue(_ block: consuming PendingBlock, sealing: Bool = false) -> Bool {
        enqueueNumbered(block, sealing: sealing) != nil
    }

    /// Queues `block` as ``enqueue(_:sealing:)`` does; returns the number the queue gave it
    /// (for ``BlockQueue/remove(sequence:)``), or `nil` when the loop refused it.
    func enqueueNumbered(_ block: consuming PendingBlock, sealing: Bool = false) -> UInt64? {
        // The common case takes only the queue's lock: a poster never waits for a busy loop.
        let sequence: UInt64
        var sleepSeen: UInt64 = 0
        switch blocks.append(block, sealing: sealing, sleepSeen: &sleepSeen, in: sleep) {
        case .refused:
            return nil
        case let .queued(number):
            // The gate was read under the queue's lock: no fence needed [C2].
            sleep.wake(seen: sleepSeen)
            return number
        case let .queuedWithNewModes(modes, number):
            sequence = number
            // Queuing a block for a mode brings that mode into existence (the first time
            // only: the queue remembers). Until this runs the loop sees the block but not yet
            // the mode, which no run can tell apart from an empty mode.
            state.withLock { state in
                guard !state.isTornDown else { return }
                for mode in modes where !state.modes.contains(mode) { state.modes[mode] = ModeState() }
            }
            blocks.noteExisting(modes)
        }
        sleep.wake()
        return sequence
    }

    /// Makes a sleeping loop return from its wait; the run goes on.
    ///
    /// Called while the loop runs but is busy, the next wait returns at once. No effect while
    /// the loop is not running. Safe to call from any thread.
    public func wakeUp() {
        let wake: Bool = state.withLock { state in
            // A host's wait counts as a run's (W2): its descriptor must become readable.
            guard !state.runs.isEmpty || state.hostPrepared else { return false }
            // Asleep: ending that sleep is the whole wake. Marking it as pending too would
            // make the next wait return at once as well: two passes for one wake. (The loop
            // decides to sleep under this lock, so it cannot fall asleep in between.)
            if sleep.isAsleep { return true }
            wakeRequested.store(true, ordering: .releasing)
            return false
        }
        if wake { sleep.wake() }
    }

    /// Ends the innermost active run after its current pass (its blocks still run).
    ///
    /// No effect while the loop is not running. Safe to call from any thread.
    public func stop() {
        let wake: Bool = state.withLock { state in
            guard !state.runs.isEmpty else {
                // Between a host's prepare and its dispatch's pass: the dispatch returns
                // `.stopped` (W1), and a host asleep on the descriptor wakes for it.
                guard state.hostPrepared else { return false }
                state.hostStopped = true
                return true
            }
            state.runs[state.runs.count - 1].stopped = true
            return true
        }
        if wake { sleep.wake() }
    }

    /// Ends every active run, the outermost included, after its current pass: a
    /// ``LoopThread`` ending its loop from a block that a nested run happens to drain.
    func stopAllRuns() {
        let wake: Bool = state.withLock { state in
            for index in state.runs.indices { state.runs[index].stopped = true }
            return !state.runs.isEmpty
        }
        if wake { sleep.wake() }
    }

    // MARK: - Called by items

    /// A version-0 source of this loop was signalled.
    func sourceWasSignalled(_ source: Source) {
        let wake: Bool = state.withLock { state in
            guard state.containsAnywhere(source) else { return false }
            if !state.signalled.contains(source) { state.signalled.append(source) }
            maybeSignalled.store(true, ordering: .releasing)
            guard let mode = state.currentMode else { return false }
            return state.modes.read(mode, { $0.contains(source) }) == true
        }
        if wake { sleep.wake() }
    }

    /// Removes an invalidated source from every mode; returns the modes it was in.
    ///
    /// Called with the source's lock held; the caller releases removed descriptors
    /// (``releaseRemovedDescriptors()``) once it has let go of that lock.
    func detach(_ source: Source) -> [Mode] {
        let (removed, wake): ([Mode], Bool) = state.withLock { state in
            state.commonSources.remove(source)
            state.signalled.removeAll { $0 === source }
            var removed: [Mode] = []
            state.modes.updateEach { mode, modeState in if modeState.remove(source) { removed.append(mode) } }
            if !source.isVersion0, !removed.isEmpty { descriptorsChanged.store(true, ordering: .releasing) }
            return (removed, state.sleepingModeEmptied())
        }
        if wake { sleep.wake() }
        return removed
    }

    /// Removes an invalidated timer from every mode.
    func detach(_ timer: Timer) {
        let wake: Bool = state.withLock { state in
            state.commonTimers.remove(timer)
            state.modes.updateEach { $0.removeTimer(ObjectIdentifier(timer), invalidated: true) }
            return state.sleepingModeEmptied()
        }
        if wake { sleep.wake() }
    }

    /// Removes an invalidated observer from every mode.
    func detach(_ observer: Observer) {
        state.withLock { state in
            state.commonObservers.remove(observer)
            observersVersion.add(1, ordering: .releasing)
            state.modes.updateEach { $0.observers.removeAll { $0 === observer } }
        }
    }

    /// Queues a re-armed timer in every mode it is in, waking the loop if it must wake sooner.
    func requeue(_ timer: Timer, at instant: ContinuousClock.Instant, tolerance: Duration, generation: UInt64) {
        let wake: Bool = state.withLock { state in
            var wake = false
            let id = ObjectIdentifier(timer)
            let (currentMode, sleepDeadline) = (state.currentMode, state.sleepDeadline)
            state.modes.updateEach { mode, modeState in
                guard modeState.timers[id] != nil else { return }
                modeState.queue(timer, at: instant, tolerance: tolerance, generation: generation)
                timerBound.lower(to: instant)
                if currentMode == mode, sleepDeadline.map({ instant + tolerance < $0 }) ?? true { wake = true }
            }
            return wake
        }
        if wake { sleep.wake() }
    }
}

extension ModeState {
    /// Inserts `source`; false when it was already there.
    mutating func insert(_ source: Loop.Source) -> Bool {
        let id = ObjectIdentifier(source)
        if source.isVersion0 {
            return versionZero.updateValue(source, forKey: id) == nil
        }
        guard versionOne.updateValue(source, forKey: id) == nil else { return false }
        if let (fd, _) = source.watchedDescriptor {
            descriptorSources[fd, default: []].append(source)
            changedDescriptors.insert(fd)
        }
        return true
    }

    /// Removes `source`; false when it was not there.
    mutating func remove(_ source: Loop.Source) -> Bool {
        let id = ObjectIdentifier(source)
        if source.isVersion0 { return versionZero.removeValue(forKey: id) != nil }
        guard versionOne.removeValue(forKey: id) != nil else { return false }
        if let (fd, _) = source.watchedDescriptor {
            let remaining = descriptorSources.update(fd) { sources in
                sources.removeAll { $0 === source }
                return sources.count
            }
            if remaining == 0 { descriptorSources[fd] = nil }
            changedDescriptors.insert(fd)
        }
        return true
    }
}
