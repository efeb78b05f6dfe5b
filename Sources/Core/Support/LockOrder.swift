import Glibc

/// The order in which RunLoopKit's locks nest, written once: a thread that holds one of them
/// takes only locks of a later rank, never an earlier one, and never the same one again (but
/// for the backend lock, which is recursive by design).
///
/// 1. ``backend``: a loop's backend and its registrations (``Registrar``). Recursive:
///    libevent callbacks of a user's own events and `withBackend` bodies run under it, and may
///    remove a source, which takes it again.
/// 2. ``item``: a timer's state, a source's loop list, an observer's binding. An item's lock
///    comes before its loop's, so that an item joins or leaves modes in one step.
/// 3. ``loopState``: a loop's state (`Loop.state`): modes, runs, the signalled list.
/// 4. ``blockQueue``: a loop's queued blocks (``BlockQueue``), looked at under the state lock
///    when the loop decides whether a mode is empty.
///
/// Locks without a rank (a port's messages, the main-loop slot, mode names, thread handles)
/// take no other lock while held. Debug builds check the order at every acquisition of a
/// ranked lock and trap naming both locks; release builds compile none of it.
package enum LockRank: UInt8, Comparable, CustomStringConvertible {
    case backend = 1
    case item
    case loopState
    case blockQueue

    package static func < (a: LockRank, b: LockRank) -> Bool { a.rawValue < b.rawValue }

    package var description: String {
        switch self {
        case .backend: "backend"
        case .item: "item (timer, source or observer)"
        case .loopState: "loop state"
        case .blockQueue: "block queue"
        }
    }
}

#if DEBUG
/// The ranked locks the calling thread holds, in the order taken (debug builds only).
enum LockOrderCheck {
    private final class Held {
        var ranks: [LockRank] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<Held>.fromOpaque(pointer).release() }
        }
        trap(unless: result == 0, "RunLoopKit: pthread_key_create failed (\(result))")
        return key
    }()

    private static var held: Held {
        if let pointer = pthread_getspecific(key) { return Unmanaged<Held>.fromOpaque(pointer).takeUnretainedValue() }
        let held = Held()
        pthread_setspecific(key, Unmanaged.passRetained(held).toOpaque())
        return held
    }

    /// Checks that a lock of `rank` may be taken now, and records it as held.
    static func willAcquire(_ rank: LockRank, recursive: Bool = false) {
        let held = self.held
        if let latest = held.ranks.max() {
            trap(
                unless: latest < rank || (recursive && latest == rank),
                "RunLoopKit: lock order broken: taking the \(rank) lock while holding the \(latest) lock (the order is backend, item, loop state, block queue; see LockRank)"
            )
        }
        held.ranks.append(rank)
    }

    /// Whether the calling thread holds a lock of `rank` (for checks that a value is changed
    /// under its lock; which lock of that rank is not known).
    static func holds(_ rank: LockRank) -> Bool {
        held.ranks.contains(rank)
    }

    /// Records that a lock of `rank` was released.
    static func didRelease(_ rank: LockRank) {
        let held = self.held
        if let index = held.ranks.lastIndex(of: rank) { held.ranks.remove(at: index) }
    }
}
#endif
