import Synchronization

/// What a loop's passes tell the outside world about themselves, recorded in one place: the
/// statistics (``LoopCounters``, read by ``Loop/statistics``) and where the loop is, for stall
/// monitors (``LoopProgress``).
///
/// The pass calls it at its boundaries: a run entered and left, a phase entered (``enter(_:)``),
/// a callout made (``enterCallout(_:in:)``, ``leaveCallout(to:)``), a wait that polled or slept,
/// a pass ended. Each call is a few relaxed stores; a clock is read only where the statistics'
/// time awake and asleep need it, and otherwise only while a stall monitor watches.
///
/// The statistics count time on the loop's clock; a stall monitor watches real time, since a
/// callout takes real time on any clock (on a virtual one, time moves only while the loop
/// sleeps). On the real clock (``LoopClock/readsRealTime``) one reading serves both.
///
/// Only the loop's thread calls it (debug builds check); other threads read ``counters`` and
/// ``progress``.
final class PassInstruments: @unchecked Sendable {
    // @unchecked: the variables below are touched only on the loop's thread.

    /// The statistics' counters.
    let counters = LoopCounters()
    /// What the loop is doing now, for stall monitors.
    let progress = LoopProgress()

    /// The number and flags of the stretch of work the loop is in, and where in it the loop
    /// is: the two halves of ``LoopProgress/word`` as the loop last published it.
    /// (`@exclusivity(unchecked)`: confined to the loop's thread, so no access can overlap
    /// another thread's; each check would cost a runtime call per phase.)
    @exclusivity(unchecked) private var stamp: UInt64 = 0
    @exclusivity(unchecked) private var place: UInt8 = 0
    /// Since when (``counted(_:)``) the loop has been awake in its outermost run (`nil`:
    /// not running), for the statistics' time awake.
    @exclusivity(unchecked) private var awakeSince: Int64?
    /// The loop's clock when it is not the real one (``LoopClock/nanoseconds``), for the
    /// statistics' time awake and asleep; `nil` on the real clock, which
    /// ``Nanoseconds/now()`` reads directly.
    private let virtualNanoseconds: (@Sendable () -> Int64)?

    init(clock: LoopClock) {
        virtualNanoseconds = clock.readsRealTime ? nil : clock.nanoseconds
    }

    #if DEBUG
    /// The loop's thread, bound on first use.
    private let owner = FirstThreadCheck()
    #endif

    // MARK: - Runs (R2, R10)

    /// A run starts (`outermost`: no other run of the loop is active). Returns where the
    /// enclosing run was (in a callout, for a nested run; idle for the outermost): it goes on
    /// there, in a stretch of its own, when this run returns.
    func enterRun(outermost: Bool) -> UInt8 {
        assertLoopThread()
        let enteredAt = Nanoseconds.now()
        if outermost { awakeSince = counted(enteredAt) }
        let enclosing = place
        beginStretch(at: enteredAt, place: Loop.place(.entry))
        return enclosing
    }

    /// The run that ``enterRun(outermost:)`` returned `enclosing` for ends.
    func leaveRun(outermost: Bool, returningTo enclosing: UInt8) {
        assertLoopThread()
        let exitedAt = Nanoseconds.now()
        if outermost, let awakeSince {
            counters.add(from: awakeSince, to: counted(exitedAt), asleep: false)
            self.awakeSince = nil
        }
        beginStretch(at: exitedAt, place: enclosing)
    }

    // MARK: - Phases and callouts

    /// The loop is now in `phase`, in its own code.
    @inline(__always)
    func enter(_ phase: Loop.PassPhase) {
        publish(phase.rawValue)
    }

    /// A callout of `kind` begins in `phase`: counted, and published for stall monitors.
    @inline(__always)
    func enterCallout(_ kind: Loop.CalloutKind, in phase: Loop.PassPhase) {
        counters.count(kind)
        publish(Loop.place(phase, kind))
    }

    /// A port's messages are being delivered, in the version-1 sources' phase.
    @inline(__always)
    func enterPortDelivery() {
        publish(Loop.place(.version1Sources, .portMessage))
    }

    /// The port delivered `delivered` messages: each is a callout of its handler.
    @inline(__always)
    func leavePortDelivery(delivered: Int) {
        counters.count(.portMessage, times: UInt64(delivered))
        publish(Loop.PassPhase.version1Sources.rawValue)
    }

    /// A callout returned to the loop's code in `phase`.
    @inline(__always)
    func leaveCallout(to phase: Loop.PassPhase) {
        publish(phase.rawValue)
    }

    // MARK: - Waits (R6) and the end of a pass (R9)

    /// A wait polled: that ends a stretch of work as a sleep does (a sleep began the next one as
    /// it woke), so one stretch is at most one pass's work.
    func polled() {
        assertLoopThread()
        beginStretch(place: Loop.place(.afterWaiting))
    }

    /// The loop goes to sleep: its time awake so far is counted, and its stretch of work ends.
    /// Returns when it fell asleep (``counted(_:)``), for ``accountWake(sleptAt:)``.
    func fallAsleep() -> Int64 {
        assertLoopThread()
        let time = Nanoseconds.now()
        let sleptAt = counted(time)
        if let awakeSince { counters.add(from: awakeSince, to: sleptAt, asleep: false) }
        beginStretch(at: time, place: 0)
        return sleptAt
    }

    /// The loop slept from `sleptAt` until now: counted as time asleep; it is awake from now on,
    /// in a new stretch of work.
    func accountWake(sleptAt: Int64) {
        assertLoopThread()
        let wokeAt = Nanoseconds.now()
        let counted = counted(wokeAt)
        counters.add(from: sleptAt, to: counted, asleep: true)
        awakeSince = counted
        beginStretch(at: wokeAt, place: Loop.place(.afterWaiting))
    }

    /// A host's wait (``Loop/prepareForHost(in:)``) that slept since `asleepSince`
    /// (``countedNow()``) ended.
    func hostWaitEnded(asleepSince: Int64) {
        counters.add(from: asleepSince, to: countedNow(), asleep: true)
    }

    /// The time as the statistics count it: the loop's clock.
    func countedNow() -> Int64 { virtualNanoseconds?() ?? Nanoseconds.now() }

    /// `real`, a reading of ``Nanoseconds/now()``, as the statistics count time: itself on the
    /// real clock, the loop's clock read now on a virtual one.
    @inline(__always)
    private func counted(_ real: Int64) -> Int64 {
        guard let virtualNanoseconds else { return real }
        return virtualNanoseconds()
    }

    /// A pass ends: counted, and when its wait slept, so is why the wait ended.
    func endPass(_ wake: Loop.WakeupReason?) {
        if let wake { counters.count(wake) }
        counters.countPass()
    }

    // MARK: - Publishing

    /// Begins a stretch of work at `place` (0: idle), at `time` (``Nanoseconds/now()``) when the
    /// caller has read it: unwatched, the clock is not read for it.
    private func beginStretch(at time: Int64? = nil, place: UInt8) {
        var stamp = ((self.stamp >> 8) &+ 1) << 8
        if progress.monitors.load(ordering: .relaxed) > 0 {
            progress.since.store(time ?? Nanoseconds.now(), ordering: .relaxed)
            stamp |= LoopProgress.stampedBit
        }
        self.stamp = stamp
        self.place = place
        progress.word.store(stamp | UInt64(place), ordering: .releasing)
    }

    /// Says the loop is now at `place` in the current stretch.
    @inline(__always)
    private func publish(_ place: UInt8) {
        assertLoopThread()
        self.place = place
        progress.word.store(stamp | UInt64(place), ordering: .relaxed)
    }

    @inline(__always)
    private func assertLoopThread() {
        #if DEBUG
        owner.check("RunLoopKit: a loop's pass instruments were used off the loop's thread")
        #endif
    }
}
