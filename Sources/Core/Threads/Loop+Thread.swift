internal import CRunLoopSupport
import Glibc
import Synchronization

extension Loop {
    /// The calling thread's loop, created with `factory` if the thread has none yet.
    ///
    /// On the main thread this is the main loop. This is how a loop runs on a backend written
    /// outside RunLoopKit: call it first thing on the thread that will run the loop, with that
    /// backend's factory (or give the factory to `LoopThread(name:backend:)`, which does so on
    /// a thread of its own). For RunLoopKit's own backends, `Loop.current` and
    /// `Loop.current(backend:)` from `RunLoopKit` pick the factory.
    ///
    /// ```swift
    /// let factory = BackendFactory(kind: BackendKind(name: "poll")) { try PollBackend() }
    /// let loop = try Loop.current(creatingWith: factory)
    /// ```
    ///
    /// - Throws: ``BackendError/kindMismatch(existing:requested:)`` when the thread's loop
    ///   uses another backend, or `factory` made a backend of another kind than it names;
    ///   whatever `factory` throws when the backend cannot start.
    public static func current(creatingWith factory: BackendFactory) throws -> Loop {
        if let loop = ThreadBinding.bound {
            guard loop.backend == factory.kind else {
                throw BackendError.kindMismatch(existing: loop.backend, requested: factory.kind)
            }
            return loop
        }
        let loop =
            ThreadBinding.isMainThread
            ? try main(creatingWith: factory)
            : Loop(backend: try makeBackend(with: factory), isMain: false)
        ThreadBinding.bind(loop)
        // [G4] On its own thread, from its creation: the GLib backend makes its context the
        // thread's default.
        if !loop.isMain { loop.withOwnSourcePhase { $0.loopDidBindToOwnThread() } }
        return loop
    }

    /// The main thread's loop, created with `factory` if it does not exist yet.
    ///
    /// Safe to call from any thread. To run the main loop on a backend of your own, call this
    /// before anything asks for `Loop.main` (which creates it with the build's default
    /// backend); otherwise prefer `Loop.main` from `RunLoopKit`.
    ///
    /// - Throws: ``BackendError/kindMismatch(existing:requested:)`` when the main loop exists
    ///   on another backend; whatever `factory` throws when the backend cannot start.
    public static func main(creatingWith factory: BackendFactory) throws -> Loop {
        try mainLoop.withLock { main in
            if let main {
                guard main.backend == factory.kind else {
                    throw BackendError.kindMismatch(existing: main.backend, requested: factory.kind)
                }
                return main
            }
            let loop = Loop(backend: try makeBackend(with: factory, forMainLoop: true), isMain: true)
            main = loop
            return loop
        }
    }

    /// Creates the calling thread's loop over the backend `factory` makes, as `wrap` returns
    /// it, reading time from `clock`; binds it to the thread as its current loop. For
    /// RunLoopKitTesting's virtual loops, on threads of their own.
    ///
    /// Traps if the thread already has a loop, or is the main thread.
    package static func bindNew(
        creatingWith factory: BackendFactory, clock: LoopClock, wrap: (any Backend) -> any Backend
    ) throws -> Loop {
        trap(unless: currentIfCreated == nil, "Loop.bindNew: this thread already has a loop")
        trap(unless: !ThreadBinding.isMainThread, "Loop.bindNew: the main thread's loop is Loop.main")
        let loop = Loop(backend: wrap(try makeBackend(with: factory)), isMain: false, clock: clock)
        ThreadBinding.bind(loop)
        // [G4] As `current(creatingWith:)` does: the GLib backend makes its context the thread's default.
        loop.withOwnSourcePhase { $0.loopDidBindToOwnThread() }
        return loop
    }

    /// A backend from `factory`; one of another kind than the factory names is refused with
    /// ``BackendError/kindMismatch(existing:requested:)`` (existing: the kind it made).
    private static func makeBackend(with factory: BackendFactory, forMainLoop: Bool = false) throws -> any Backend {
        let backend = try (forMainLoop ? factory.makeForMainLoop ?? factory.make : factory.make)()
        guard backend.kind == factory.kind else {
            throw BackendError.kindMismatch(existing: backend.kind, requested: factory.kind)
        }
        return backend
    }

    /// The calling thread's loop if it has one; never creates one.
    public static var currentIfCreated: Loop? {
        if let loop = ThreadBinding.bound { return loop }
        return ThreadBinding.isMainThread ? mainLoop.withLock { $0 } : nil
    }

    private static let mainLoop = Lock<Loop?>(nil)

    /// The main thread's loop if it was created; never creates it. Safe from any thread.
    package static var mainIfCreated: Loop? { mainLoop.withLock { $0 } }

    /// The loop bound to the calling thread, without binding or creating one.
    static var currentIfBound: Loop? { ThreadBinding.bound }

    /// Gives `body` this loop's backend, for code that adds its own events to it (for
    /// example a libevent `event_base`).
    ///
    /// Call it on the loop's own thread only (it traps elsewhere); the backend stays valid
    /// until the thread exits.
    ///
    /// While `body` runs, the loop holds the lock that guards its backend: a thread that
    /// removes or invalidates one of this loop's descriptor or port sources meanwhile waits
    /// until `body` returns (so that the descriptor has left the backend when its call
    /// returns). `body` must therefore never wait for such a thread, or both wait forever.
    public func withBackend<R>(_ body: (any Backend) throws -> R) rethrows -> R {
        trap(unless: isOnOwnThread, "Loop.withBackend(_:) called on a thread that is not \(self)'s own")
        // Under the backend lock: another thread may be unregistering a descriptor.
        guard let result = try registrar.withBackend(body) else {
            trap("Loop.withBackend(_:): \(self) was torn down when its thread exited")
        }
        return result
    }

    /// Whether the calling thread is this loop's own thread.
    package var isOnOwnThread: Bool {
        if let bound = ThreadBinding.bound { return bound === self }
        // The main loop may have been created from another thread before the main thread
        // asked for it: bind it on first use there.
        guard isMain, ThreadBinding.isMainThread else { return false }
        ThreadBinding.bind(self)
        return true
    }

    /// Releases everything the loop holds when its thread exits.
    func tearDown() {
        var retired: LoopState?
        let (sources, timers, observers): ([Source: [Mode]], [Timer], [Observer]) = state.withLock { state in
            state.isTornDown = true
            var sources: [Source: [Mode]] = [:]
            var timers: Set<Timer> = []
            var observers: Set<Observer> = []
            for (mode, modeState) in state.modes {
                for source in modeState.versionZero.values { sources[source, default: []].append(mode) }
                for source in modeState.versionOne.values { sources[source, default: []].append(mode) }
                timers.formUnion(modeState.timers.values)
                observers.formUnion(modeState.observers)
            }
            // Swap the old state out so that what it holds is released after unlocking.
            var old = LoopState()
            old.isTornDown = true
            swap(&state, &old)
            retired = old
            return (sources, Array(timers), Array(observers))
        }
        // Released here, with no lock held.
        withExtendedLifetime(retired) {}
        local.readySources = []
        local.signalledSources = []
        local.observers = .empty
        // Blocks that will never run are released here, with no lock held: a waiting caller's
        // block tells it so as it is freed (see `PendingBlock.body`).
        local.takenBlocks.removeAll()
        withExtendedLifetime(blocks.close()) {}
        // Timers and observers belong to this loop for life; sources may live on elsewhere.
        for timer in timers { timer.invalidate() }
        for observer in observers { observer.invalidate() }
        for (source, modes) in sources {
            source.loops.withLock { loops in
                loops[ObjectIdentifier(self)] = nil
                source.queueCallouts(joined: false, loop: self, modes: modes)
            }
            source.makeQueuedCallouts()
        }
        // [G4] Still on the loop's thread, before the backend goes.
        withOwnSourcePhase { $0.loopWillEnd() }
        registrar.tearDown()
        // Once nothing queued can run any more: an attachment may end what waits on it (the NIO
        // adapter ends its pending scheduled tasks here, and hands telling them to the ended
        // loop's executor, after the work the loop dropped).
        attachments.loopDidEnd()
        // Last: the jobs of Swift concurrency and the attachments' work the loop dropped above
        // were held; they run from now on, on the executor that stands for the ended loop [E3],
        // in the order handed over.
        endedJobs.loopDidEnd(self)
    }
}

/// The thread → loop association: a pthread key whose destructor tears the loop down when its
/// thread exits.
enum ThreadBinding {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            let loop = Unmanaged<Loop>.fromOpaque(pointer).takeRetainedValue()
            loop.tearDown()
        }
        trap(unless: result == 0, "RunLoopKit: pthread_key_create failed (\(result))")
        return key
    }()

    static var bound: Loop? {
        pthread_getspecific(key).map { Unmanaged<Loop>.fromOpaque($0).takeUnretainedValue() }
    }

    static func bind(_ loop: Loop) {
        pthread_setspecific(key, Unmanaged.passRetained(loop).toOpaque())
        loop.ownerThread.recordCurrent()
    }

    /// On Linux the main thread's kernel thread id equals the process id.
    static var isMainThread: Bool { rlk_gettid() == getpid() }
}
