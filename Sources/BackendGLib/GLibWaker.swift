#if GLib
internal import CGLib
import RunLoopCore
import Synchronization

/// Wakes a GLib backend's wait with `g_main_context_wakeup`, safe from any thread.
///
/// It holds its own reference to the context, so a wake after the backend was released (the
/// loop keeps its waker when its thread exits) still reaches a live context. GLib's wake-up
/// descriptor is its own and `g_main_context_wakeup` writes it every time; GLib also writes it
/// itself (for sources attached from other threads), which is not a wake of this waker, so the
/// wait must tell the two apart.
///
/// Three atomics, each kept because a measurement showed it needed (the GLib cases of the wake
/// race, hot-path race, statistics, sleep and stress tests: about 420,000 wakes a run, in which
/// every sleep that ends must have a reason; with all three, no spurious wakeup):
/// - `pending` (``isPending``, ``consume()``), set by the first wake until a wait consumes it:
///   the nested-iteration source's check reads it, so that a block posted from another thread
///   is served in the GLib iteration that the wake ended, not the next one (without it, a post's
///   round trip into a nested `GMainLoop` took 126–134 µs at the median instead of 108–109 µs:
///   3 runs of 3,000, debug build); so does the wait, which polls instead of sleeping, and while
///   another thread owns the context does not wait out its millisecond recheck. Sparing a
///   second write is not what it is for: Core's sleep gate already lets one poster per sleep
///   reach the waker (1 wake in 284,001 found one pending).
/// - `writesUnderWay` (``hasWakeUnderWay``): a write that had landed before a wait's poll but
///   was not counted yet when the wait ended (its thread held up between the two) was otherwise
///   taken for GLib's own wake-up, a pass for nothing: 1 spurious wakeup in about 417,000 wakes
///   without it.
/// - `writesDone` (``writesMade``): a late write, landed after the poll of the wait that
///   consumed its wake, was otherwise taken for GLib's own wake-up by the next wait: 31 spurious
///   wakeups in 6 tests, in about 422,000 wakes, without it (22 in 7 tests without either
///   counter). With both, the waits set aside 59 such readinesses in about 140,000 wakes.
///
/// They cost a writing wake three uncontended read-modify-writes besides the exchange: 13–14 ns
/// for the four against 5.4 ns for the exchange alone (a C loop on the 2-CPU test machine),
/// beside about 370 ns for the eventfd write that `g_main_context_wakeup` makes.
///
/// `@unchecked Sendable`: its only state besides the atomics is the context pointer, constant,
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
