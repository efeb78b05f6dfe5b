import Dispatch
import RunLoopCore

extension Loop {
    /// Creates the calling thread's loop over `backend`, on virtual time that moves by itself:
    /// a virtual loop's time and backend (as a ``VirtualLoop``'s), with a thread of its own in
    /// the test's part. Each time the loop settles asleep until a deadline — nothing posted,
    /// signalled or ready — that thread moves the time to the deadline and wakes the loop, as
    /// ``VirtualLoop/advance(to:)`` does at each instant on its way. So the loop's own runs and
    /// timers play out in virtual time, in the contract's order, while the calling thread runs
    /// the loop. Time starts at the real instant of this call; the thread ends with the loop.
    ///
    /// For the conformance suite's run on virtual time, whose tests run their loops on their
    /// own threads. What another thread does while such a loop sleeps until a deadline races
    /// that thread's move of time: tests of that are real-time only.
    ///
    /// Traps if the calling thread already has a loop, or is the main thread.
    package static func bindNewOnSelfAdvancingTime(backend: BackendKind) throws -> Loop {
        let factory = try backend.requireFactory()
        let time = VirtualTime()
        let loop = try Loop.bindNew(creatingWith: factory, clock: time.loopClock) {
            VirtualTimeBackend(wrapping: $0, time: time)
        }
        let driver = TimeDriver(time: time, loop: loop)
        try PThread.spawn(name: "time driver") { driver.run() }.detach()
        return loop
    }
}

/// The thread that moves a self-advancing loop's time (see
/// `Loop.bindNewOnSelfAdvancingTime(backend:)`).
private final class TimeDriver: Sendable {
    private let time: VirtualTime
    /// Weak: the loop belongs to its thread, and ends with it.
    private let weakLoop: WeakBox

    private final class WeakBox: Sendable {
        weak let loop: Loop?
        init(_ loop: Loop) { self.loop = loop }
    }

    init(time: VirtualTime, loop: Loop) {
        self.time = time
        weakLoop = WeakBox(loop)
    }

    /// Until the loop ends: waits for it to settle, then moves time to its deadline and wakes
    /// it; a loop waiting for an event only, or with work on its way (`hasWorkWhileAsleep`), is
    /// left to sleep until its next sleep.
    func run() {
        var after: UInt64?
        while true {
            guard case let .settled(settled) = time.waitUntilSettled(after: after, deadline: .distantFuture) else {
                return // the loop ended
            }
            after = settled.sleeps
            guard let loop = weakLoop.loop else { return }
            guard !loop.hasWorkWhileAsleep, let deadline = settled.deadline else { continue }
            if time.set(elapsed: deadline, ifStillIn: settled.sleeps) { loop.backendWaker.wake() }
        }
    }
}
