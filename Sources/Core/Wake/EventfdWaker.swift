import Synchronization

/// An eventfd that wakes a backend's wait from any thread; writes are coalesced while a wake
/// is pending.
///
/// For backends that watch a descriptor for their wakes (epoll, libevent): register
/// ``descriptor`` for reading like any other, and call ``consume()`` on the loop's thread when
/// it is reported ready. The waker owns the eventfd, so a `wake()` racing with the loop's
/// teardown never touches a freed backend.
package final class EventfdWaker: BackendWaker {
    /// The eventfd to watch for reading.
    package var descriptor: Int32 { counter.descriptor }
    private let counter: EventCounter
    /// True from the first `wake()` until the waiting side consumes the eventfd.
    private let pending = Atomic<Bool>(false)

    /// Creates the eventfd.
    ///
    /// - Throws: ``SystemError`` from `eventfd` when the process is out of descriptors.
    package init() throws(SystemError) {
        counter = try EventCounter()
    }

    deinit { counter.close() }

    /// Makes the eventfd readable. Safe from any thread; only the first wake since the last
    /// ``consume()`` pays for a write.
    package func wake() {
        guard !pending.exchange(true, ordering: .sequentiallyConsistent) else { return }
        counter.signal()
    }

    /// Drains the eventfd; call on the loop's thread when it was reported readable.
    /// The wake was seen by a wait that watches the eventfd edge-triggered (`EPOLLET`): each
    /// write is an edge of its own, reported once, so there is nothing to read; only the next
    /// wake must write again. Saves the `read` a level-triggered watch needs, on the path from
    /// a post to its work. The counter only grows, by one per sleep that was woken: it would
    /// take 2^64 of them to fill.
    ///
    /// Clearing `pending` after the edge was reported is the same order as ``consume()``'s:
    /// a wake landing before the store skips its write while the loop is awake and about to
    /// look at the work that wake was for; every wake after it writes, and makes an edge.
    package func consumeEdge() {
        pending.store(false, ordering: .sequentiallyConsistent)
    }

    package func consume() {
        // Drain first, then clear `pending`. The other order loses wakes for good: a wake
        // landing between the two sees `pending` clear, writes, and the read swallows that
        // write, leaving `pending` set on an empty eventfd, so every later wake returns
        // without writing. In this order a wake landing in between sees `pending` still set
        // and skips its write, which is harmless: the loop is awake and about to look at the
        // work that wake was for; every wake after the store writes.
        counter.drain()
        pending.store(false, ordering: .sequentiallyConsistent)
    }
}
