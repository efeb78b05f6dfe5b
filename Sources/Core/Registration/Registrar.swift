import Glibc
import Synchronization

/// The one owner of a loop's descriptor registration: its backend and the lock that guards
/// it, the table of what is registered (``DescriptorTable``), and the mode and dispatch main
/// queue the loop's thread last registered.
///
/// The pass and the source API call it, and nothing else touches the backend's registrations:
/// - the loop's thread brings the backend in line with the mode it runs before it waits
///   (``sync(_:mainQueue:mayHaveChanged:changes:)``), waits with the backend under the lock
///   (``withBackend(_:)``), and finds the sources of the events the wait returned
///   (``collectReady(_:into:)``);
/// - any thread that removes or invalidates a version-1 source takes the descriptors no
///   source needs any more out of the backend (``releaseRemoved(waking:changes:)``);
/// - a ready source reporting an error is checked for a descriptor closed behind its back
///   (``closedBehindTheirBack(_:)``).
///
/// What cannot be watched comes back as ``Unwatchable`` entries, for the caller to report and
/// invalidate once it holds no lock (`Loop.invalidateUnwatchable(_:)`).
///
/// Why a lock and not "loop thread only": a removed descriptor must leave the kernel's
/// interest set before `invalidate()` or `remove(_:from:)` returns, on whatever thread that
/// is — an io_uring poll holds a reference to the file (a socket closed next would stay open),
/// and an epoll entry outlives the descriptor number when the file is shared. The loop's
/// thread holds the lock while it syncs registrations and while it waits; a thread that needs
/// the backend while the loop sleeps wakes the loop first, and takes the lock when the wait
/// returns. The loop never calls out to user code while it holds the lock, except libevent
/// callbacks of a user's own events and `withBackend`'s body, which may themselves invalidate
/// a source: hence a recursive mutex.
final class Registrar: @unchecked Sendable {
    // @unchecked: `backend` and `table` are only touched with `mutex` held; `registered` only
    // on the loop's thread.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var backend: (any Backend)?
    private var table = DescriptorTable()
    /// The mode whose descriptors the backend watches and the dispatch main queue's descriptor
    /// when it watches that too, as the loop's thread last registered them: only that thread
    /// changes them, so it reads them without the lock to skip an unchanged sync.
    private var registered: (mode: Loop.Mode?, mainQueue: Int32?) = (nil, nil)
    /// How many descriptors are registered for version-1 sources, readable without the lock
    /// (which a sleeping loop holds).
    let registeredCount = Atomic<Int>(0)
    /// Threads waiting for the lock from outside the loop. The loop does not go to sleep
    /// while one waits: it would keep the lock, and the waiter, for the whole sleep.
    private let waiters = Atomic<Int>(0)

    init(backend: any Backend) {
        self.backend = backend
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        let result = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        trap(unless: result == 0, "RunLoopKit: pthread_mutex_init failed (\(result))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    // MARK: - The backend (lock held)

    /// Runs `body` with the backend, under the lock; `nil` once the loop was torn down.
    @discardableResult
    func withBackend<R>(_ body: (any Backend) throws -> R) rethrows -> R? {
        try withLock {
            guard let backend else { return nil }
            return try body(backend)
        }
    }

    /// Whether a thread outside the loop waits for the lock (see ``releaseRemoved(waking:changes:)``): the
    /// loop must not go to sleep holding it.
    var hasWaiters: Bool { waiters.load(ordering: .sequentiallyConsistent) > 0 }

    /// Whether nothing is registered, neither a source's descriptor nor the dispatch main
    /// queue: a poll then has nothing to ask the kernel. On the loop's thread.
    var watchesNothing: Bool { registeredCount.load(ordering: .relaxed) == 0 && registered.mainQueue == nil }

    // MARK: - Syncing

    /// What the registrar has registered, which decides what it needs to know of a mode: every
    /// descriptor of a mode it does not have registered, only the changed ones of the one it has.
    struct Registered {
        /// The mode whose descriptors the backend watches, if any.
        let mode: Loop.Mode?
        /// The dispatch main queue's descriptor, when the backend watches it.
        let mainQueue: Int32?
    }

    /// Registers the descriptors of `mode`'s version-1 sources (and `mainQueue`, the dispatch
    /// main queue's, when the main loop serves it in `mode`) in the backend, when they changed
    /// since the last call. On the loop's thread.
    ///
    /// - Parameters:
    ///   - mayHaveChanged: whether a source may have joined or left a mode since the last sync
    ///     (``PassHints``): when not, and `mode` and `mainQueue` are those registered, nothing
    ///     is done, without the lock.
    ///   - changes: called with the lock held, given what is registered: the mode's descriptors
    ///     as mode membership hands them (``WatchedDescriptors/take(all:)``), or `nil` when
    ///     nothing changed.
    /// - Returns: what cannot be watched, for `Loop.invalidateUnwatchable(_:)` once no lock is
    ///   held.
    func sync(
        _ mode: Loop.Mode, mainQueue: Int32?, mayHaveChanged: Bool,
        changes: (Registered) -> DescriptorTable.Changes?
    ) -> [Unwatchable] {
        // Only this thread changes the registered mode and main queue; other threads only
        // flag changed sources: nothing changed costs no lock.
        if !mayHaveChanged, registered.mode == mode, registered.mainQueue == mainQueue {
            return []
        }
        let unwatchable = withLock { apply(changes, to: mode, mainQueue: mainQueue) }
        registered = (mode, mainQueue)
        return unwatchable
    }

    /// Takes the descriptors that no source of the registered mode needs any more out of the
    /// backend now, from any thread (D7). A loop asleep holds the lock: `gate` wakes it, and it
    /// does not sleep again until this caller had its turn.
    ///
    /// - Parameter changes: as for ``sync(_:mainQueue:mayHaveChanged:changes:)``, for the
    ///   registered mode.
    /// - Returns: what cannot be watched (a source left on a descriptor closed behind its back),
    ///   for `Loop.invalidateUnwatchable(_:)` once no lock is held.
    func releaseRemoved(
        waking gate: SleepGate, changes: (Registered) -> DescriptorTable.Changes?
    ) -> [Unwatchable] {
        // [D7] Announced before the loop is looked at; the loop publishes `sleeping` before it
        // looks at `waiters` (see `Loop.decideSleep`): either it sees us, or we see it asleep.
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer { waiters.subtract(1, ordering: .sequentiallyConsistent) }
        gate.wake()
        return withLock {
            guard let mode = table.mode else { return [] }
            return apply(changes, to: mode, mainQueue: table.mainQueue?.descriptor)
        }
    }

    /// Brings the backend in line with `mode`'s version-1 sources and `mainQueue`, as `changes`
    /// says they are, if anything changed. Lock held.
    private func apply(
        _ changes: (Registered) -> DescriptorTable.Changes?, to mode: Loop.Mode, mainQueue: Int32?
    ) -> [Unwatchable] {
        guard let backend,
            let changes = changes(Registered(mode: table.mode, mainQueue: table.mainQueue?.descriptor))
        else { return [] }
        return table.sync(changes, mode: mode, mainQueue: mainQueue, with: backend)
    }

    // MARK: - Events

    /// Appends to `ready` the sources each of `events` is for, with what it reported, and says
    /// whether the dispatch main queue is ready and how many events were for sources. On the
    /// loop's thread, after a wait.
    func collectReady(
        _ events: [ReadyEvent], into ready: inout [(source: Loop.Source, readiness: Readiness)]
    ) -> (mainQueueReady: Bool, sourceEvents: Int) {
        // Another thread may have unregistered a descriptor since the wait: its event is stale.
        withLock {
            var mainQueueReady = false
            var sourceEvents = 0
            for event in events {
                if table.isMainQueue(event.token) {
                    mainQueueReady = true
                    continue
                }
                // [D8] An event whose registration has ended is dropped.
                guard let sources = table.sources(for: event.token) else { continue }
                sourceEvents += 1
                for source in sources {
                    // [D3] Hang-ups and errors concern every interest.
                    guard let (_, interest) = source.watchedDescriptor, event.readiness.concerns(interest) else {
                        continue
                    }
                    ready.append((source, event.readiness))
                }
            }
            return (mainQueueReady, sourceEvents)
        }
    }

    /// The sources among `ready` reporting an error whose descriptor no longer names the file
    /// they were made for (closed, or closed and reused, behind their back): to be reported and
    /// invalidated, not called (D8).
    static func closedBehindTheirBack(_ ready: [(source: Loop.Source, readiness: Readiness)]) -> [Unwatchable] {
        guard ready.contains(where: { $0.readiness.contains(.error) }) else { return [] }
        return ready.compactMap { source, readiness in
            guard readiness.contains(.error), let (fd, _) = source.watchedDescriptor else { return nil }
            let now = FileIdentity(of: fd)
            guard now != source.fileIdentity else { return nil }
            return .closed(source, descriptor: fd, nowNames: now)
        }
    }

    // MARK: - Teardown

    /// Unregisters everything and releases the backend (the loop's thread is exiting).
    func tearDown() {
        withLock {
            if let backend { table.removeAll(from: backend) }
            backend = nil
        }
    }

    // MARK: - The lock

    /// Runs `body` with the lock held.
    private func withLock<R>(_ body: () throws -> R) rethrows -> R {
        #if DEBUG
        LockOrderCheck.willAcquire(.backend, recursive: true)
        defer { LockOrderCheck.didRelease(.backend) }
        #endif
        pthread_mutex_lock(mutex)
        defer {
            registeredCount.store(table.count, ordering: .relaxed)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
}
