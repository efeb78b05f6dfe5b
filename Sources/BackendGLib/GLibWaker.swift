#if GLib
internal import CGLib
import RunLoopCore
import Synchronization

/// Wakes a GLib backend's wait with `g_main_context_wakeup`, safe from any thread.
///
/// It holds its own reference to the context, so a wake after the backend was released (the
/// loop keeps its waker when its thread exits) still reaches a live context. GLib's wake-up
/// descriptor is its own and `g_main_context_wakeup` writes it every time; the `pending` flag
/// makes wakes posted while one is pending cost no system call, and tells the wait whether a
/// wake of this waker was consumed (GLib's descriptor is also written by GLib itself, for
/// sources attached from other threads, which is not a wake of this waker).
///
/// `@unchecked Sendable`: its only state besides the atomic is the context pointer, constant,
/// and GLib's `g_main_context_wakeup` is safe from any thread.
final class GLibWaker: BackendWaker, @unchecked Sendable {
    /// The `GMainContext`, referenced until the waker goes.
    private let context: OpaquePointer
    /// True from the first `wake()` until a wait consumes it.
    private let pending = Atomic<Bool>(false)

    init(context: OpaquePointer) {
        self.context = g_main_context_ref(context)
    }

    deinit { g_main_context_unref(context) }

    /// Makes the current or next wait return (the contract's W2: a sleeping loop is woken).
    /// Only the first wake since the last wait consumed one writes GLib's wake-up descriptor.
    func wake() {
        // Counted under way before the decision, so that a wait that consumes this wake sees it
        // under way until its write is done and counted.
        writesUnderWay.add(1, ordering: .sequentiallyConsistent)
        if !pending.exchange(true, ordering: .sequentiallyConsistent) {
            g_main_context_wakeup(context)
            writesDone.add(1, ordering: .sequentiallyConsistent)
        }
        writesUnderWay.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Wakes between their start and the end of their write (or of their decision not to).
    private let writesUnderWay = Atomic<Int>(0)
    /// Writes of GLib's wake-up descriptor this waker made.
    private let writesDone = Atomic<Int>(0)

    /// How many writes this waker made so far.
    var writesMade: Int { writesDone.load(ordering: .sequentiallyConsistent) }

    /// Whether a wake is under way: its write may still land.
    var hasWakeUnderWay: Bool { writesUnderWay.load(ordering: .sequentiallyConsistent) > 0 }

    /// Whether a wake is pending: the wait then polls instead of sleeping.
    var isPending: Bool { pending.load(ordering: .sequentiallyConsistent) }

    /// Consumes a pending wake, after `g_main_context_check` drained GLib's wake-up descriptor;
    /// returns whether there was one.
    ///
    /// In this order (drain, then clear) no wake is lost: one landing between the two sees the
    /// flag still set and skips its write, harmlessly, since this wait reports it consumed; one
    /// landing after the clear writes. A write that lands after the poll and before the drain is
    /// left readable: the next wait returns at once, empty-handed, and Core waits again.
    func consume() -> Bool {
        pending.exchange(false, ordering: .sequentiallyConsistent)
    }
}
#endif
