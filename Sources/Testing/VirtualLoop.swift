import RunLoopCore
import RunLoopKit

/// A loop on virtual time, for tests of code that runs on a loop: its clock moves only when the
/// test moves it, with ``advance(by:)`` or ``advance(to:)``.
///
/// It is a `Loop` like any other — modes, sources, timers with tolerance, observers, blocks,
/// nested runs, run results — on a thread of its own, like a `LoopThread`, running
/// `.default`. Only its time differs: a timer due in an hour fires when the test
/// advances the loop by an hour, at once. Its wait still blocks for real until something
/// happens, so blocks posted, sources signalled and descriptors made ready by other threads
/// reach it as they reach any loop.
///
/// ```swift
/// let virtual = try VirtualLoop()
/// defer { virtual.stop() }
/// let timer = try Loop.Timer(fireAt: virtual.now + .seconds(90)) { _ in print("fired") }
/// virtual.loop.add(timer, to: .default)
/// try virtual.advance(by: .seconds(90))  // "fired", at once
/// ```
///
/// What reads the loop's clock follows virtual time: timers' instants (make them from
/// ``now``), a `Loop.Timer` made with `after:` (its delay counts from the loop's time when it is
/// first added), `perform(after:in:_:)`, run timeouts, `Loop.sleep(for:tolerance:)`, ``clock``,
/// the loop's statistics (time asleep and awake, timer lateness: time moves only while the loop
/// sleeps, so its time awake stays zero) and `debugDescription`'s "fires in". What reads the
/// real clock does not: `Loop.main` and `@MainActor` work; `Task.sleep` (pass ``clock`` to code
/// that takes a clock); and a `StallMonitor`, which watches for callouts that take real time
/// (on virtual time a callout takes none).
///
/// Descriptor sources work as on any loop; ``ScriptedDescriptor`` gives a test a real
/// descriptor whose readiness it sets.
///
/// Many virtual loops may run in one process, each with its own time.
public final class VirtualLoop: Sendable {
    /// The loop; use it as any loop, from any thread.
    public let loop: Loop
    let thread: LoopThread
    let time: VirtualTime
    /// Held by an advance from start to end: advances from several threads take turns.
    let advancing = Lock(())
    /// How long, in real time, an advance or ``runUntilIdle()`` waits for the loop to be idle
    /// at each instant before it throws ``VirtualLoopError/notSettled(within:)``: a loop that
    /// never settles fails the test in seconds instead of hanging it.
    public let settleLimit: Duration

    /// Starts a thread whose loop runs on virtual time, over the build's default backend.
    ///
    /// Virtual time starts at the real instant of this call.
    /// - Parameters:
    ///   - name: the thread's name.
    ///   - settleLimit: how long in real time to wait for the loop to be idle at each instant
    ///     of an advance (see ``settleLimit``); positive.
    /// - Throws: `BackendError` when the backend cannot start; `SystemError` when the thread
    ///   cannot.
    public convenience init(name: String = "VirtualLoop", settleLimit: Duration = .seconds(10)) throws {
        try self.init(name: name, backend: .default, settleLimit: settleLimit)
    }

    /// Starts a thread whose loop runs on virtual time, over `backend`.
    ///
    /// - Throws: `BackendError.notBuiltIn(_:)` for a kind this build does not have;
    ///   `BackendError` when the backend cannot start; `SystemError` when the thread cannot.
    ///   A `settleLimit` that is not positive traps with a message.
    public init(name: String = "VirtualLoop", backend: BackendKind, settleLimit: Duration = .seconds(10)) throws {
        trap(unless: settleLimit > .zero, "VirtualLoop: settleLimit must be positive, not \(settleLimit)")
        self.settleLimit = settleLimit
        let factory = try backend.requireFactory()
        let time = VirtualTime()
        thread = try LoopThread(name: name) {
            try Loop.bindNew(creatingWith: factory, clock: time.loopClock) {
                VirtualTimeBackend(wrapping: $0, time: time)
            }
        }
        loop = thread.loop
        self.time = time
    }

    /// The loop's current instant: the real instant it was made, plus the time advanced since.
    ///
    /// Safe to read from any thread.
    public var now: ContinuousClock.Instant { time.now }

    /// A clock whose instants are this loop's virtual time, for code that takes a clock
    /// (`clock.sleep(for:)`): its sleeps end when the loop's time reaches them.
    public var clock: VirtualLoopClock { VirtualLoopClock(loop: self) }

    #if DEBUG
    /// For tests, in debug builds only: `hook` runs on the loop's thread each time a wait with a
    /// timeout begins, after the loop decided to sleep and before its backend is polled: the
    /// window in which a wake must not be lost (`nil` removes it).
    package func holdWaitsBeforePolling(_ hook: (@Sendable () -> Void)?) {
        time.beforePoll.withLock { $0 = hook }
    }

    /// For tests, in debug builds only: `hook` runs on the advancing thread before each move of
    /// the loop's time, after the advance saw the loop settled (`nil` removes it).
    package func holdAdvancesBeforeMovingTime(_ hook: (@Sendable () -> Void)?) {
        time.beforeMove.withLock { $0 = hook }
    }
    #endif

    /// Ends the loop once every block posted before this call has run, and joins its thread.
    ///
    /// Later advances throw ``VirtualLoopError/ended``. Must not be called from the loop's own
    /// thread (it traps there with a message). Also done when the last reference goes; a timer,
    /// block or task on the loop that captures this object (or its ``clock``) keeps it alive, so
    /// a test calls `stop()` (`defer { virtual.stop() }`).
    public func stop() {
        thread.stop()
    }
}
