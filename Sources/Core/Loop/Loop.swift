import DequeModule
import Glibc
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
    /// The statistics and what stall monitors read, recorded by the pass (see ``PassInstruments``).
    let instruments: PassInstruments
    /// Where the loop reads the time (the NIO adapter reads it too, to follow a virtual clock).
    package let clock: LoopClock
    /// What a pass reads without the lock to skip work there is none of; see ``PassHints``
    /// for who raises and lowers each, under which lock.
    let hints = PassHints()
    /// The thread the loop belongs to, once bound, for messages naming it (``LoopBound``).
    let ownerThread = OwnerThread()
    /// The backend serves sources of its own as a phase of the pass (GLib's): every wait
    /// reaches it, and its callbacks run in ``PassPhase/backendSources`` (see
    /// ``OwnSourceServing/passPhase(_:)``). The phase's object is asked of the backend at each
    /// use: the loop must not keep its backend alive.
    let ownSourcesInPassPhase: Bool
    /// What a host loop can wait on for this loop (constant for a backend's life), without the
    /// preparation step, which is asked of the backend before each host wait.
    let hostDescriptorOffer: HostDescriptorOffer
    /// Objects other modules of the package keep for this loop (see ``LoopAttachment``).
    let attachments = LoopAttachments()
    /// Where the jobs of Swift concurrency go that the loop dropped (see ``EndedLoopJobs``).
    let endedJobs = EndedLoopJobs()
    /// The loop's weak reference to itself, for its whole life (see ``WeakLoop``): written once,
    /// in `init`, before the loop is shared, and never read.
    nonisolated(unsafe) private var selfReference = WeakLoop()

    init(backend: any Backend, isMain: Bool, clock: LoopClock = .continuous) {
        self.backend = backend.kind
        let ownSources = backend.ownSources
        if case .passPhase = ownSources {
            self.ownSourcesInPassPhase = true
        } else {
            self.ownSourcesInPassPhase = false
        }
        self.hostDescriptorOffer = HostDescriptorOffer(backend.embedding)
        self.isMain = isMain
        self.clock = clock
        self.instruments = PassInstruments(clock: clock)
        let gate = SleepGate(waker: backend.waker)
        self.sleep = gate
        var initial = LoopState()
        initial.servesMainQueue = isMain
        self.state = Lock(initial, rank: .loopState)
        self.registrar = Registrar(backend: backend)
        selfReference = WeakLoop(loop: self)
        // [G5] Before the loop is shared: the GLib backend attaches the source that serves the
        // loop from GLib iterations nested in its callouts.
        if case let .passPhase(phase) = ownSources { phase.loopDidCreate(self) }
    }

    /// Creates a loop over `backend` reading time from `clock`, bound to the calling thread
    /// as its current loop (for Core's own tests: a scripted backend and a virtual clock).
    ///
    /// Traps if the thread already has a loop.
    package static func makeBoundToCurrentThread(backend: any Backend, clock: LoopClock) -> Loop {
        trap(unless: currentIfCreated == nil, "Loop.makeBoundToCurrentThread: this thread already has a loop")
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

    /// The current instant on the loop's clock (package: the conformance suite reads a loop's
    /// time through it, so that its tests hold on virtual time too).
    package var now: ContinuousClock.Instant { clock.now() }

    /// The current time on the loop's clock as a pass reads it: nanoseconds on ``QueueTime``'s
    /// scale (see ``LoopClock``).
    var nowNanoseconds: Int64 { clock.nanoseconds() }

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

    /// The mode of the innermost active run, or `nil` when the loop is not running. A host loop
    /// that drives the loop runs it too, in the mode it serves, from ``prepareForHost(in:)``
    /// until its ``dispatchForHost()`` has run the pass (or ``cancelHostWait()``).
    ///
    /// Safe to call from any thread.
    public var currentMode: Mode? { state.withLock { $0.currentMode } }

    /// Whether the loop is asleep in its backend, waiting for work.
    ///
    /// Safe to call from any thread.
    public var isWaiting: Bool { sleep.isAsleep }

    /// The common modes (initially just ``Mode/default``). Safe to call from any thread.
    public var commonModes: Set<Mode> { state.withLock { $0.commonModes } }
}

extension Loop {
    /// The loop's thread, for messages: `thread "worker" (tid 4242)`; the main loop not yet
    /// bound is `the main thread (tid PID)`, any other loop always is bound.
    var ownerThreadDescription: String {
        if let owner = ownerThread.recorded { return owner.description }
        return isMain ? "the main thread (tid \(getpid()))" : "its thread (not yet known)"
    }
}

extension Loop {
    /// Whether the loop's thread ended and the loop was torn down. Any thread.
    var hasEnded: Bool { state.withLock { $0.isTornDown } }
}
