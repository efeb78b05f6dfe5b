package import CGLib
import Glibc

/// A timerfd armed at a deadline, which a GSource has GLib poll so that GLib's poll ends at that
/// deadline to the nanosecond (GLib's own timeouts are whole milliseconds).
///
/// Armed relative to the moment it is armed, so never early on `ContinuousClock`, whichever
/// kernel clock stands for it; re-armed only when the deadline changes; closed when released.
/// The GLib adapter's source and the GLib backend's nested-iteration source both use one.
package final class DeadlineTimer {
    /// The timerfd (CLOCK_MONOTONIC, non-blocking, close-on-exec).
    package let descriptor: Int32
    /// The deadline it is armed at; nil when disarmed or expired.
    package private(set) var armed: ContinuousClock.Instant?
    /// `g_source_add_unix_fd`'s tag for the timerfd in the source that polls it (``poll(in:)``);
    /// nil until then.
    package private(set) var tag: gpointer?

    /// A new, disarmed timer; nil when the process is out of descriptors.
    package init?() {
        descriptor = rlk_timerfd_create()
        guard descriptor >= 0 else { return nil }
    }

    deinit { close(descriptor) }

    /// Has GLib poll the timerfd as one of `source`'s descriptors (readable once it expires).
    /// Adding a descriptor to an attached source writes GLib's wake-up descriptor: the caller
    /// decides when.
    package func poll(in source: UnsafeMutablePointer<GSource>) {
        tag = g_source_add_unix_fd(source, descriptor, G_IO_IN)
    }

    /// Arms it to expire at `deadline` (disarms it for nil); nothing when it is armed there
    /// already. A deadline that has passed expires at once.
    package func arm(at deadline: ContinuousClock.Instant?) {
        guard deadline != armed else { return }
        armed = deadline
        guard let deadline else {
            _ = rlk_timerfd_arm(descriptor, 0, 0)
            return
        }
        // At least a nanosecond: an all-zero value disarms.
        let remaining = max(deadline - .now, .nanoseconds(1))
        let (seconds, attoseconds) = remaining.components
        // Rounded up to the nanosecond: never before the deadline.
        var nanoseconds = attoseconds / 1_000_000_000 + (attoseconds % 1_000_000_000 == 0 ? 0 : 1)
        var wholeSeconds = seconds
        if nanoseconds >= 1_000_000_000 {
            (wholeSeconds, nanoseconds) = (wholeSeconds + 1, nanoseconds - 1_000_000_000)
        }
        _ = rlk_timerfd_arm(descriptor, wholeSeconds, Int(nanoseconds))
    }

    /// In the check of the source that polls it: reads its expirations if GLib's poll found it
    /// readable (an expired timerfd polls readable until read, prepared or not), so that it no
    /// longer does; the next ``arm(at:)`` arms it again.
    package func consumeExpiry(in source: UnsafeMutablePointer<GSource>) {
        guard let tag, g_source_query_unix_fd(source, tag).rawValue & G_IO_IN.rawValue != 0 else { return }
        var expirations: UInt64 = 0
        if read(descriptor, &expirations, MemoryLayout<UInt64>.size) == MemoryLayout<UInt64>.size { armed = nil }
    }
}
