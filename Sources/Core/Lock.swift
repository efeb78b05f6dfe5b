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
package struct Lock<Value>: @unchecked Sendable {
    // @unchecked: the value is only reached inside `withLock`, under the mutex.
    private let storage: LockStorage<Value>

    /// Creates a lock guarding `value`.
    package init(_ value: Value) {
        storage = LockStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value.
    ///
    /// Not reentrant: calling `withLock` on the same lock inside `body` deadlocks.
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withLock(body)
    }
}

@usableFromInline
final class LockStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: Value) -> LockStorage {
        let buffer = create(minimumCapacity: 1) { _ in value }
        let storage = unsafeDowncast(buffer, to: LockStorage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "RunLoopKit: pthread_mutex_init failed (\(result))")
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
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}
