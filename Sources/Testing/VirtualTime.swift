import Dispatch
import Glibc
import RunLoopCore
import Synchronization

/// The time of one virtual loop, and what its loop's thread is doing: shared by the loop's
/// backend (on the loop's thread) and the test's thread(s) that move time and wait for the
/// loop to settle.
///
/// Time is an offset in nanoseconds from a real instant taken when the loop was made; only
/// ``set(elapsed:ifStillIn:)`` moves it, and only while the loop sleeps. The loop reads it
/// lock-free.
final class VirtualTime: Sendable {
    /// What the loop's thread is doing, as its backend sees it.
    struct State {
        /// The loop waits for real with nothing due now (its wait had a timeout, or none).
        var isSleeping = false
        /// Counts the sleeps begun: a settled loop seen after a wake has a higher count.
        var sleeps: UInt64 = 0
        /// When the sleeping loop's wait would end, as nanoseconds of virtual time; `nil` when
        /// it waits for an event only.
        var deadline: Int64?
        /// Wakes begun (counted before the backend's waker is called) and done (after).
        var wakesBegun: UInt64 = 0
        var wakesDone: UInt64 = 0
        /// The wakes begun when the current sleep began; a later one ends it.
        var wakesBegunAtSleep: UInt64 = 0
        /// The loop's thread has ended: nothing will settle again.
        var hasEnded = false
        /// The descriptors registered with the backend: for what, and the file each named then.
        var descriptors: [Int32: (interest: Interest, file: FileIdentity?)] = [:]
        /// Semaphores of the threads waiting for a change of this state.
        var waiters: [DispatchSemaphore] = []

        /// The loop sleeps, and nothing posted or ready will wake it before its deadline.
        var isSettled: Bool { isSleeping && wakesBegun == wakesBegunAtSleep }
    }

    /// The real instant virtual time counts from.
    let base: ContinuousClock.Instant
    private let elapsedNanoseconds = Atomic<Int64>(0)
    private let state = Lock(State())

    #if DEBUG
    /// For tests, in debug builds only: runs on the loop's thread as a wait that may sleep (one
    /// with a timeout, or none) begins, before the backend is polled (see `VirtualLoop.holdWaitsBeforePolling(_:)`).
    let beforePoll = Lock<(@Sendable () -> Void)?>(nil)
    /// For tests, in debug builds only: runs on the advancing thread before each move of time.
    let beforeMove = Lock<(@Sendable () -> Void)?>(nil)
    #endif

    init() { base = .now }

    /// Virtual nanoseconds since ``base``.
    var elapsed: Int64 { elapsedNanoseconds.load(ordering: .acquiring) }

    /// The current virtual instant.
    var now: ContinuousClock.Instant { base + .nanoseconds(elapsed) }

    /// `instant` as virtual nanoseconds since ``base``, rounded up (a deadline is never early).
    func nanoseconds(of instant: ContinuousClock.Instant) -> Int64 {
        (instant - base).nanosecondsRoundedUp
    }

    /// Moves time to `elapsed` (never backwards: the caller checked), if the loop is still in
    /// the sleep counted `sleeps`: the loop reads the time only once its wait returned, so a
    /// sleeping loop sees time move only when it wakes, and the deadline it recorded stays
    /// right. Returns false, and time stays, when the loop woke meanwhile (another thread's
    /// work): the caller lets it settle again.
    func set(elapsed: Int64, ifStillIn sleeps: UInt64) -> Bool {
        #if DEBUG
        beforeMove.withLock { $0 }?()
        #endif
        return state.withLock { state in
            guard state.isSleeping, state.sleeps == sleeps else { return false }
            elapsedNanoseconds.store(
                Swift.max(elapsed, elapsedNanoseconds.load(ordering: .relaxed)), ordering: .releasing)
            return true
        }
    }

    /// The loop's clock: this time, read without a lock.
    var loopClock: LoopClock {
        LoopClock(now: { [self] in now }, origin: base)
    }

    // MARK: the loop's side (its backend, on its thread)

    /// The wakes completed so far: a poll that begins after this read consumes them all.
    var wakesDone: UInt64 { state.withLock { $0.wakesDone } }

    /// The loop begins to wait for real, until `deadline` (virtual nanoseconds) or an event,
    /// unless a wake was begun since `wakesDone` wakes were done (its poll may have consumed
    /// it: the loop must look at its queues again first). Returns whether it sleeps.
    func willSleep(until deadline: Int64?, ifNoWakeSince wakesDone: UInt64) -> Bool {
        var sleeps = false
        change { state in
            guard state.wakesBegun == wakesDone else { return }
            state.isSleeping = true
            state.sleeps += 1
            state.deadline = deadline
            state.wakesBegunAtSleep = state.wakesBegun
            sleeps = true
        }
        return sleeps
    }

    /// The loop's wait returned.
    func didWake() {
        change { $0.isSleeping = false }
    }

    /// Runs `wake` (the backend's waker), counted.
    func wake(_ wake: () -> Void) {
        state.withLock { $0.wakesBegun += 1 }
        wake()
        change { $0.wakesDone += 1 }
    }

    /// The loop's thread ended (its backend was released).
    func loopDidEnd() {
        change { $0.hasEnded = true }
    }

    func registered(_ descriptor: Int32, for interest: Interest) {
        let file = FileIdentity(of: descriptor)
        state.withLock { $0.descriptors[descriptor] = (interest, file) }
    }

    func unregistered(_ descriptor: Int32) {
        state.withLock { _ = $0.descriptors.removeValue(forKey: descriptor) }
    }

    // MARK: the test's side

    /// What a settled loop reports: it sleeps, nothing woke it, no descriptor it watches is
    /// ready.
    struct Settled {
        /// Its sleeps so far: ``waitUntilSettled(after:deadline:)`` with it waits for a later one.
        let sleeps: UInt64
        /// When its wait ends, in virtual nanoseconds; `nil` when it waits for an event only.
        let deadline: Int64?
    }

    /// How a wait for the loop to settle ended.
    enum SettleOutcome {
        case settled(Settled)
        /// The loop's thread ended first: nothing will settle again.
        case ended
        /// The deadline passed first.
        case timedOut
    }

    /// Waits until the loop sleeps with nothing to do now, in a sleep begun after the one
    /// counted `after` (`nil`: any), or until the loop's thread ended, or until `deadline`.
    func waitUntilSettled(after: UInt64? = nil, deadline: DispatchTime) -> SettleOutcome {
        while true {
            let semaphore = DispatchSemaphore(value: 0)
            let outcome: SettleOutcome? = state.withLock { state in
                if state.hasEnded { return .ended }
                if state.isSettled, after.map({ state.sleeps > $0 }) ?? true, !Self.anyReady(state.descriptors) {
                    return .settled(Settled(sleeps: state.sleeps, deadline: state.deadline))
                }
                state.waiters.append(semaphore)
                return nil
            }
            if let outcome { return outcome }
            // A waiter that gave up stays in the list until the next change signals it: harmless.
            if semaphore.wait(timeout: deadline) == .timedOut { return .timedOut }
        }
    }

    private func change(_ body: (inout State) -> Void) {
        let waiters = state.withLock { state in
            body(&state)
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Whether a watched descriptor is ready for what it is watched for, or hung up, or in
    /// error: the loop's wait will then return (poll(2), without waiting).
    ///
    /// A number that names another file than the one registered (closed behind its source's
    /// back and reused, rule D8) is not polled: the backend watches the file it was registered
    /// for (epoll drops a closed file's entry), not the file the number names now, so the new
    /// file's readiness does not end the loop's wait.
    private static func anyReady(_ descriptors: [Int32: (interest: Interest, file: FileIdentity?)]) -> Bool {
        let watched = descriptors.filter { descriptor, entry in
            entry.file != nil && FileIdentity(of: descriptor) == entry.file
        }
        guard !watched.isEmpty else { return false }
        var polled = watched.map { descriptor, entry in
            let interest = entry.interest
            var events: Int16 = 0
            if interest.contains(.readable) { events |= Int16(POLLIN) }
            if interest.contains(.writable) { events |= Int16(POLLOUT) }
            return pollfd(fd: descriptor, events: events, revents: 0)
        }
        let ready = polled.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), 0) }
        guard ready > 0 else { return false }
        // A descriptor closed behind its source's back (POLLNVAL) is not watched by the kernel.
        return polled.contains { $0.revents != 0 && $0.revents & Int16(POLLNVAL) == 0 }
    }
}
