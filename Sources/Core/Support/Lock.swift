import Glibc

/// A value guarded by a `pthread_mutex_t`: the lock RunLoopKit uses everywhere.
///
/// Why not `Synchronization.Mutex`: on Linux (Swift 6.3) the Thread Sanitizer does not see it,
/// so data handed from one thread to another through it is reported as a race, and a suite
/// full of such reports hides the real ones. A `pthread_mutex_t` is intercepted by the
/// sanitizer. The mutex lives in the same allocation as the value (one `ManagedBuffer`), so a
/// lock costs one allocation, like the object that owns it. It costs no more than `Mutex`
/// (measured: the same uncontended, less under contention; see "Design measurements" in the
/// benchmark docs), so it is used in every build, not only under the sanitizer.
///
/// Debug builds check how it is used: the mutex is an error-checking one (taking it again on
/// the thread that holds it, or releasing it from another thread, traps with a message instead
/// of deadlocking or corrupting it), and a lock given a ``LockRank`` checks the lock order.
/// Release builds pay for neither.
package struct Lock<Value>: @unchecked Sendable {
    // @unchecked: the value is only reached inside `withLock`, under the mutex.
    private let storage: LockStorage<Value>
    #if DEBUG
    private let rank: LockRank?
    #endif

    /// Creates a lock guarding `value`.
    package init(_ value: Value) {
        storage = LockStorage.make(value)
        #if DEBUG
        rank = nil
        #endif
    }

    /// Creates a lock guarding `value` that takes its place in the lock order (checked in debug
    /// builds).
    ///
    /// - Parameter spinsBeforeSleeping: in release builds, a thread that finds the lock taken
    ///   spins a little before it sleeps in the kernel (`PTHREAD_MUTEX_ADAPTIVE_NP`): for a lock
    ///   held only for a few instructions by threads on other CPUs, where sleeping means a
    ///   system call for the waiter and another for the holder to wake it.
    package init(_ value: Value, rank: LockRank, spinsBeforeSleeping: Bool = false) {
        storage = LockStorage.make(value, adaptive: spinsBeforeSleeping)
        #if DEBUG
        self.rank = rank
        #endif
    }

    /// Runs `body` with exclusive access to the value.
    ///
    /// Not reentrant: calling `withLock` on the same lock inside `body` deadlocks (and traps in
    /// debug builds).
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        #if DEBUG
        if let rank { LockOrderCheck.willAcquire(rank) }
        defer { if let rank { LockOrderCheck.didRelease(rank) } }
        #endif
        return try storage.withLock(body)
    }
}

@usableFromInline
final class LockStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: Value, adaptive: Bool = false) -> LockStorage {
        let buffer = create(minimumCapacity: 1) { _ in value }
        let storage = unsafeDowncast(buffer, to: LockStorage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            #if DEBUG
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            #else
            if adaptive { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP)) }
            #endif
            let result = pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
            trap(unless: result == 0, "RunLoopKit: pthread_mutex_init failed (\(result))")
        }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }

    @inlinable
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try withUnsafeMutablePointers { value, mutex throws(Failure) in
            #if DEBUG
            let locked = pthread_mutex_lock(mutex)
            trap(
                unless: locked == 0,
                "RunLoopKit: a lock was taken again by the thread that holds it, which would deadlock (\(locked))")
            defer {
                let unlocked = pthread_mutex_unlock(mutex)
                trap(unless: unlocked == 0, "RunLoopKit: a lock was released by a thread that does not hold it")
            }
            #else
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            #endif
            return try body(&value.pointee)
        }
    }
}
