import Synchronization

/// The flags a pass reads without the loop's lock, to skip work there is none of: every
/// shortcut of the hot path that another thread can invalidate, in one place, under one rule.
///
/// **The rule.** Other threads *raise* a hint, always under the loop's state lock (`Loop.state`)
/// and after the change it announces, with a releasing store (or read-modify-write). The loop's
/// thread *reads* it without the lock (acquiring): a hint that reads low while the change it
/// announces is already made is a race the loop loses for one pass at most, because every
/// change that must not wait for the next pass (work for a sleeping loop) is followed by a wake
/// (`SleepGate.wake()`), and the loop decides to sleep under the same lock (W3, C2). A hint is
/// *lowered* only under the state lock, once the work it announced has been taken in that same
/// lock-held section, so that a raise made after the lowering is never lost. A stale high hint
/// only costs the lock the shortcut would have saved.
///
/// | hint | raised by (any thread, state lock) | read without the lock by | lowered by (state lock) |
/// | --- | --- | --- | --- |
/// | ``maybeSignalled`` | a signal, a signalled source joining a mode | the signalled-source step (R4) | that step, once the list is empty |
/// | ``wakeRequested`` | `wakeUp()` while the loop is awake (W2) | — (only under the lock) | a run's start and end; each wait, which consumes it (R6) |
/// | ``descriptorsChanged`` | a version-1 source joining or leaving a mode | the descriptor sync before a wait | the sync that tells the backend (backend lock too; any thread) |
/// | ``observersVersion`` | any observer change (a bump, never lowered) | the observer step, to keep its snapshot | — |
/// | ``hasHadObservers`` | the first observer added (just before the lock; see below) | every notification | — (stays set) |
/// | ``timerBound`` | a timer queued: lowered to its instant | the timer step (R7) | a timer step: set from the queues |
/// | ``stopsRequested`` | `stop()` marking a run stopped (a bump) | a run's entry, after its observers (R2) | — (compared with the count at the run's start) |
/// | ``commonModes`` | `addCommonMode` (a bump) | a block drain, after each block (a block may make a mode common) | — (compared with the count the drain read) |
///
/// Two more shortcuts follow the same rule under a lock of their own, and live beside it:
///
/// | shortcut | written by (any thread, its lock) | read without that lock by | debug check |
/// | --- | --- | --- | --- |
/// | the block count (`BlockQueue.queuedCount`) | `perform` and the drain, under the block queue's lock, after changing the queue | a drain, to skip the lock when nothing is queued; the sleep decision looks again under the lock after publishing the sleep (C2) | its store is made in the lock's own scope (`BlockQueue.Queue.didChange`) |
/// | the registered count (`Registrar.registeredCount`) | every release of the backend lock, from the table it guards | a poll, to skip the backend when nothing is watched (the loop's own thread, which is the only one that registers for a mode) | its store is made as the lock is released (`Registrar.withLock`) |
///
/// (The timer bound runs the other way, low means work: "raising the hint" is lowering the
/// bound.) Two exceptions, both harmless: ``hasHadObservers`` is set just before the state lock
/// is taken to put the first observer in its modes (a notification that misses it is one the
/// observer was added too late for, O2); and a poll consuming a wake: a wait that returns at
/// once (R11) lowers ``wakeRequested`` on the loop's thread without the lock, which loses
/// nothing, since any wake it drops is for a wait that has already happened.
///
/// Debug builds check the rule: the lock-free reads assert they run on the loop's thread (the
/// first thread that reads a hint), the raises and lowerings that need the state lock assert
/// that a state lock is held. Release builds compile neither: each access is the one atomic
/// operation it would be as a loose property of the loop, with the same ordering.
struct PassHints: ~Copyable, Sendable {
    /// Some version-0 source may be signalled: the state's list of signalled sources may be
    /// non-empty.
    private let maybeSignalled = Atomic<Bool>(false)
    /// `wakeUp()` was called while the loop was awake, and no wait has consumed it yet.
    private let wakeRequested = Atomic<Bool>(false)
    /// The version-1 sources changed since the backend was last told. Starts set: the first
    /// sync registers whatever is there.
    private let descriptorsChanged = Atomic<Bool>(true)
    /// Bumped whenever any mode's observers change: the loop's thread keeps the observers it
    /// last notified until then.
    private let observersVersion = Atomic<UInt64>(0)
    /// Set once any observer was added: until then a notification costs no lock.
    private let hasHadObservers = Atomic<Bool>(false)
    /// A lower bound of the instant of every timer queued in the loop, on ``QueueTime``'s
    /// scale. A stale entry only keeps it low (the step then takes the lock and finds nothing):
    /// never a missed timer. A timer queued by another thread while the loop is busy may be
    /// seen a pass later; one queued while it sleeps reaches it through the wake.
    private let timerBound = Atomic<Int64>(.max)
    /// Bumped by every `stop()` that marks a run stopped: a run that finds it unchanged since
    /// it was recorded knows, without the lock, that nothing stopped it before its first pass.
    private let stopsRequested = Atomic<UInt64>(0)
    /// Bumped whenever a mode is made common: a block drain re-reads the common modes then.
    private let commonModes = Atomic<UInt64>(0)

    #if DEBUG
    /// The thread that made the first lock-free read: the loop's thread, which may not be the
    /// one that created the loop (the main loop).
    private let reader = FirstThreadCheck()
    #endif

    init() {}

    // MARK: - Signalled sources (R4, S1)

    /// A source was put on the state's list of signalled sources. State lock held.
    func noteSignalled() {
        assertStateLocked()
        maybeSignalled.store(true, ordering: .releasing)
    }

    /// Whether a signalled source may be waiting; false means the list is empty. Loop's thread,
    /// without the lock.
    func maySignalledSourcesWait() -> Bool {
        assertLoopThread()
        return maybeSignalled.load(ordering: .acquiring)
    }

    /// The list of signalled sources was found empty. State lock held, by the loop's thread.
    func noteNoneSignalled() {
        assertStateLocked()
        maybeSignalled.store(false, ordering: .relaxed)
    }

    // MARK: - Wakes (W2, R6)

    /// `wakeUp()` found the loop awake in a run: the next wait returns at once. State lock held.
    func requestWake() {
        assertStateLocked()
        wakeRequested.store(true, ordering: .releasing)
    }

    /// Drops a pending wake: a run starts or ends (a wake dies with the run it was for). State
    /// lock held, by the loop's thread.
    func dropWake() {
        assertStateLocked()
        wakeRequested.store(false, ordering: .relaxed)
    }

    /// A wait that sleeps (or a host's) consumes every wake posted before it; returns whether
    /// there was one. State lock held, by the loop's thread.
    func consumeWake() -> Bool {
        assertStateLocked()
        return wakeRequested.exchange(false, ordering: .acquiring)
    }

    /// A poll consumes every wake posted before it (R11): it is a wait that returns at once. On
    /// the loop's thread, without the lock (the table's one exception).
    func consumeWakeByPolling() {
        assertLoopThread()
        wakeRequested.store(false, ordering: .relaxed)
    }

    // MARK: - Descriptors (I4, D7)

    /// A version-1 source joined or left a mode. State lock held.
    func noteDescriptorsChanged() {
        assertStateLocked()
        descriptorsChanged.store(true, ordering: .releasing)
    }

    /// Whether the version-1 sources may have changed since the backend was last told. Loop's
    /// thread, without the lock.
    func mayDescriptorsHaveChanged() -> Bool {
        assertLoopThread()
        return descriptorsChanged.load(ordering: .acquiring)
    }

    /// Whether the version-1 sources changed since the backend was last told. State lock held;
    /// any thread.
    func haveDescriptorsChanged() -> Bool {
        assertStateLocked()
        return descriptorsChanged.load(ordering: .acquiring)
    }

    /// The changes are being taken to tell the backend. State lock held (and the backend lock,
    /// which orders the syncs of several threads); any thread.
    func noteDescriptorsSynced() {
        assertStateLocked()
        descriptorsChanged.store(false, ordering: .relaxed)
    }

    // MARK: - Observers (O2)

    /// An observer is about to be added for the first time: from now on notifications look.
    /// Any thread; before the observer is put in a mode under the state lock.
    func noteObserversExist() {
        hasHadObservers.store(true, ordering: .releasing)
    }

    /// Whether any observer was ever added. Loop's thread, without the lock.
    func mayHaveObservers() -> Bool {
        assertLoopThread()
        return hasHadObservers.load(ordering: .acquiring)
    }

    /// Some mode's observers changed. State lock held.
    func noteObserversChanged() {
        assertStateLocked()
        observersVersion.add(1, ordering: .releasing)
    }

    /// The observers' version: a snapshot taken under the lock at the same version is still
    /// right. Loop's thread, without the lock.
    func observersVersionNow() -> UInt64 {
        assertLoopThread()
        return observersVersion.load(ordering: .acquiring)
    }

    // MARK: - Timers (R7, T8)

    /// A timer was queued at `value` (nanoseconds on ``QueueTime``'s scale): the bound comes
    /// down to it. State lock held.
    func lowerTimerBound(toNanoseconds value: Int64) {
        assertStateLocked()
        if value < timerBound.load(ordering: .relaxed) { timerBound.store(value, ordering: .releasing) }
    }

    /// Sets the bound from the queues (``ModeTable/timerLowerBound``). State lock held.
    func setTimerBound(_ value: Int64) {
        assertStateLocked()
        timerBound.store(value, ordering: .releasing)
    }

    /// Whether any timer may be queued at all (a bound short of the end of time). Loop's
    /// thread, without the lock.
    func mayAnyTimerBeQueued() -> Bool {
        assertLoopThread()
        return timerBound.load(ordering: .acquiring) != .max
    }

    /// Whether a timer may be due by `limit` (nanoseconds on ``QueueTime``'s scale). Loop's
    /// thread, without the lock.
    func mayTimerBeDue(by limit: Int64) -> Bool {
        assertLoopThread()
        return timerBound.load(ordering: .acquiring) <= limit
    }

    // MARK: - Stops (R2)

    /// `stop()` marked a run stopped. State lock held.
    func noteStopRequested() {
        assertStateLocked()
        stopsRequested.add(1, ordering: .releasing)
    }

    /// How many stops were requested so far: a run reads it under the lock as it is recorded,
    /// then again without the lock after its entry observers. Loop's thread.
    func stopRequests() -> UInt64 {
        assertLoopThread()
        return stopsRequested.load(ordering: .acquiring)
    }

    // MARK: - Common modes (M3)

    /// A mode was made common. State lock held.
    func noteCommonModesChanged() {
        assertStateLocked()
        commonModes.add(1, ordering: .releasing)
    }

    /// How many times a mode was made common: a drain that reads another count than it last
    /// did re-reads the common modes (under the lock). Loop's thread, without the lock.
    func commonModesVersion() -> UInt64 {
        assertLoopThread()
        return commonModes.load(ordering: .acquiring)
    }

    // MARK: - Checks (debug builds)

    @inline(__always)
    private func assertLoopThread() {
        #if DEBUG
        reader.check("RunLoopKit: a pass hint was read without the loop's lock off the loop's thread (see PassHints)")
        #endif
    }

    @inline(__always)
    private func assertStateLocked() {
        #if DEBUG
        trap(
            unless: LockOrderCheck.holds(.loopState),
            "RunLoopKit: a pass hint was changed without the loop's state lock (see PassHints)")
        #endif
    }
}
