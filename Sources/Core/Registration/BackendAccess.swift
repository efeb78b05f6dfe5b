import Glibc
import Synchronization

/// A loop's backend and what Core has registered in it, behind one lock that any thread can
/// take.
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
final class BackendAccess: @unchecked Sendable {
    // @unchecked: `backend` and `descriptors` are only touched with `mutex` held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var backendStorage: (any Backend)?
    private var descriptorStorage = DescriptorTable()
    /// How many descriptors are registered for version-1 sources, readable without the lock
    /// (which a sleeping loop holds).
    let registeredCount = Atomic<Int>(0)
    /// Threads waiting for the lock from outside the loop. The loop does not go to sleep
    /// while one waits: it would keep the lock, and the waiter, for the whole sleep.
    let waiters = Atomic<Int>(0)

    init(backend: any Backend) {
        backendStorage = backend
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        let result = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(result == 0, "RunLoopKit: pthread_mutex_init failed (\(result))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held, from a thread that may find the loop asleep holding it:
    /// the loop is woken first (through `wakeSleepingLoop`) and does not sleep again until
    /// this caller had its turn.
    func withLockWakingLoop<R>(_ wakeSleepingLoop: () -> Void, _ body: (BackendAccess) throws -> R) rethrows -> R {
        // Announced before the loop is looked at; the loop publishes `sleeping` before it
        // looks at `waiters` (see `Loop.decideSleep`): either it sees us, or we see it asleep.
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer { waiters.subtract(1, ordering: .sequentiallyConsistent) }
        wakeSleepingLoop()
        return try withLock(body)
    }

    /// Runs `body` with the lock held; `body` may use ``backend`` and ``descriptors``.
    func withLock<R>(_ body: (BackendAccess) throws -> R) rethrows -> R {
        #if DEBUG
        LockOrderCheck.willAcquire(.backend, recursive: true)
        defer { LockOrderCheck.didRelease(.backend) }
        #endif
        pthread_mutex_lock(mutex)
        defer {
            registeredCount.store(descriptorStorage.count, ordering: .relaxed)
            pthread_mutex_unlock(mutex)
        }
        return try body(self)
    }

    /// The backend; `nil` once the loop was torn down. Lock held.
    var backend: (any Backend)? {
        get { backendStorage }
        set { backendStorage = newValue }
    }

    /// Core's registrations. Lock held.
    var descriptors: DescriptorTable {
        get { descriptorStorage }
        _modify { yield &descriptorStorage }
    }
}
