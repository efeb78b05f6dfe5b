import Dispatch
import RunLoopCore

extension VirtualLoop {
    /// Moves the loop's time forward by `duration`, stopping at each instant the loop would wake
    /// at on the way, and returns once the loop waits for its next wake-up after the new instant.
    ///
    /// See ``advance(to:)``.
    /// - Throws: ``VirtualLoopError/backwards(now:requested:)`` for a negative duration;
    ///   ``VirtualLoopError/ended`` when the loop ended (before or during the advance);
    ///   ``VirtualLoopError/notSettled(within:)`` when the loop stays busy past ``settleLimit``.
    public func advance(by duration: Duration) throws(VirtualLoopError) {
        trapOnLoopThread("advance(by:)")
        try advancing.withLock { _ throws(VirtualLoopError) in
            let now = time.now
            try advanceLocked(to: now + duration, from: now)
        }
    }

    /// Moves the loop's time forward to `instant`, stopping at each instant the loop would wake
    /// at on the way, and returns once the loop waits for its next wake-up after `instant`.
    ///
    /// At each stop, the loop does what a real loop does when it wakes then: it fires the timers
    /// due, in the contract's order, and runs what they cause (blocks they post, runs they nest)
    /// before time moves on. A timer that a callback arms within the span fires within it too.
    /// The loop wakes when its plan says, as a real loop's wait would end: a timer with a
    /// tolerance fires by the end of its tolerance at the latest, and sooner when something else
    /// wakes the loop within it. Then time is at `instant`, and the loop waits for its next
    /// deadline or for work.
    ///
    /// Call it from the test's thread (any thread but the loop's); advances from several threads
    /// take turns. Other threads' work reaches the loop meanwhile, as on any loop.
    /// - Throws: ``VirtualLoopError/backwards(now:requested:)`` when `instant` is before
    ///   ``now``; ``VirtualLoopError/ended`` when the loop ended (before or during the advance);
    ///   ``VirtualLoopError/notSettled(within:)`` when the loop stays busy past ``settleLimit``.
    ///   Called from one of the loop's own callouts it traps, with a message: it would wait for
    ///   itself.
    public func advance(to instant: ContinuousClock.Instant) throws(VirtualLoopError) {
        trapOnLoopThread("advance(to:)")
        try advancing.withLock { _ throws(VirtualLoopError) in try advanceLocked(to: instant, from: time.now) }
    }

    /// Runs the loop until nothing is left to do at the current instant: no block, signal or
    /// ready source pending, no timer due. Time does not move; a repeating timer does not keep
    /// it busy (it is due at a later instant once it fired).
    ///
    /// - Throws: ``VirtualLoopError/ended`` when the loop ended first;
    ///   ``VirtualLoopError/notSettled(within:)`` when it stays busy past ``settleLimit``.
    ///   Called from one of the loop's own callouts it traps, with a message: it would wait for
    ///   itself.
    public func runUntilIdle() throws(VirtualLoopError) {
        trapOnLoopThread("runUntilIdle()")
        try advancing.withLock { _ throws(VirtualLoopError) in _ = try settle() }
    }

    /// The advance, with ``advancing`` held.
    private func advanceLocked(
        to instant: ContinuousClock.Instant, from now: ContinuousClock.Instant
    )
        throws(VirtualLoopError)
    {
        guard instant >= now else { throw .backwards(now: now, requested: instant) }
        let target = time.nanoseconds(of: instant)
        var settled = try settle()
        while true {
            // Nothing due up to the target: time moves there, and the loop sleeps on, its
            // deadline unchanged; unless it woke meanwhile, and must settle again first.
            guard let deadline = settled.deadline, deadline <= target else {
                if time.set(elapsed: target, ifStillIn: settled.sleeps) { return }
                settled = try settle()
                continue
            }
            // The next instant the loop sleeps until: time moves there, the loop is woken (its
            // wait has no real timeout), serves it, and settles again.
            if time.set(elapsed: deadline, ifStillIn: settled.sleeps) {
                loop.backendWaker.wake()
                settled = try settle(after: settled.sleeps)
            } else {
                settled = try settle()
            }
        }
    }

    /// Waits until the loop sleeps with nothing to do now (in a sleep after the one counted
    /// `after`), with no work that will end that sleep: a wake claimed and not yet delivered,
    /// or a block or signal another thread posted. Gives up after ``settleLimit`` of real time.
    private func settle(after sleeps: UInt64? = nil) throws(VirtualLoopError) -> VirtualTime.Settled {
        let deadline = DispatchTime.now() + .nanoseconds(Int(settleLimit.nanosecondsRoundedUp))
        var after = sleeps
        while true {
            switch time.waitUntilSettled(after: after, deadline: deadline) {
            case .ended: throw .ended
            case .timedOut: throw .notSettled(within: settleLimit)
            case let .settled(settled):
                guard loop.hasWorkWhileAsleep else { return settled }
                after = settled.sleeps
            }
        }
    }

    private func trapOnLoopThread(_ function: String) {
        trap(
            unless: Loop.currentIfCreated !== loop,
            "VirtualLoop.\(function) called on the loop's own thread (from one of its callouts); it would wait for itself"
        )
    }
}
