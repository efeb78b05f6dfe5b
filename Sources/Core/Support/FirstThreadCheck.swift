#if DEBUG
import Glibc
import Synchronization

/// Debug builds' check that something is used on one thread only: the first thread that uses it
/// is taken as its own, since a loop may be created on one thread (the main loop, from any) and
/// run on another.
struct FirstThreadCheck: ~Copyable, Sendable {
    /// The first thread (`pthread_self()`), 0 until then.
    private let owner = Atomic<UInt>(0)

    /// Traps with `message` when called from another thread than the first that called it.
    func check(_ message: @autoclosure () -> String) {
        let me = UInt(pthread_self())
        let (bound, current) = owner.compareExchange(expected: 0, desired: me, ordering: .relaxed)
        trap(unless: bound || current == me, message())
    }
}
#endif
