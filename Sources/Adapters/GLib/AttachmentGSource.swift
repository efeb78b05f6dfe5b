internal import CGLib
import Glibc
import RunLoopKit

/// What the GLib source that drives a loop keeps: GLib allocates the `GSource` with room for a
/// pointer to it after its own fields; the source's finalize releases it.
///
/// Touched only on the loop's thread (GLib calls prepare, check and dispatch on the thread
/// that iterates the context, which must be the loop's), except by finalize, which only
/// releases it.
final class AttachmentState {
    let loop: Loop
    let mode: Loop.Mode
    /// Kept alive by the source: the loop holds it weakly, and must find it when it ends.
    let registry: GLibAttachmentRegistry
    /// g_source_add_unix_fd's tag for the loop's descriptor, for g_source_query_unix_fd.
    var descriptorTag: gpointer?
    /// Set by prepare, cleared by dispatch: the loop waits for the host (Loop.prepareForHost).
    var isPrepared = false
    /// The prepared wait's deadline: check dispatches once it has passed.
    var deadline: ContinuousClock.Instant?
    /// The timerfd that ends GLib's poll at the loop's deadline, to the nanosecond (GLib's own
    /// timeout is whole milliseconds); polled by GLib as one of the source's descriptors. nil
    /// when the process could not make one: the source then falls back on GLib's timeout.
    let timer: DeadlineTimer?
    /// g_source_add_unix_fd's tag for the timerfd.
    var timerTag: gpointer?

    init(loop: Loop, mode: Loop.Mode, registry: GLibAttachmentRegistry) {
        self.loop = loop
        self.mode = mode
        self.registry = registry
        timer = DeadlineTimer()
    }
}

/// A timerfd armed at a deadline (relative to the moment it is armed, so never early on
/// ContinuousClock, whichever kernel clock stands for it), re-armed only when the deadline
/// changes; closed when released (the source's finalize).
final class DeadlineTimer {
    /// The timerfd (CLOCK_MONOTONIC, non-blocking, close-on-exec).
    let descriptor: Int32
    /// The deadline it is armed at; nil when disarmed or expired.
    private(set) var armed: ContinuousClock.Instant?

    /// A new, disarmed timer; nil when the process is out of descriptors.
    init?() {
        descriptor = rlk_timerfd_create()
        guard descriptor >= 0 else { return nil }
    }

    deinit { close(descriptor) }

    /// Arms it to expire at `deadline` (disarms it for nil); nothing when it is armed there
    /// already. A deadline that has passed expires at once.
    func arm(at deadline: ContinuousClock.Instant?) {
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

    /// Reads its expirations if it expired (so that it no longer polls readable); the next
    /// ``arm(at:)`` arms it again.
    func consumeExpiry() {
        var expirations: UInt64 = 0
        if read(descriptor, &expirations, MemoryLayout<UInt64>.size) == MemoryLayout<UInt64>.size { armed = nil }
    }
}

/// The GLib source (`GSource`) that drives an attached loop inside GLib's main loop: its
/// functions and its extra field. Not a `Loop.Source`: the loop's own sources are served by the
/// loop's passes, which this GSource's dispatch runs.
enum AttachmentGSource {
    /// Where the state pointer lives in the GSource's allocation: after GLib's fields, aligned.
    private static let stateOffset: Int = {
        let alignment = MemoryLayout<UnsafeMutableRawPointer>.alignment
        return (MemoryLayout<GSource>.size + alignment - 1) / alignment * alignment
    }()

    /// GLib keeps the pointer to the functions for the source's life: one table for all,
    /// never freed, never written after it is made.
    nonisolated(unsafe) private static let functions: UnsafeMutablePointer<GSourceFuncs> = {
        let functions = UnsafeMutablePointer<GSourceFuncs>.allocate(capacity: 1)
        functions.initialize(
            to: GSourceFuncs(
                prepare: prepareAttachmentGSource, check: checkAttachmentGSource, dispatch: dispatchAttachmentGSource,
                finalize: finalizeAttachmentGSource, closure_callback: nil, closure_marshal: nil))
        return functions
    }()

    /// A new, unattached source (one reference, the caller's) that owns `state`.
    static func make(with state: AttachmentState) -> UnsafeMutablePointer<GSource> {
        let size = stateOffset + MemoryLayout<UnsafeMutableRawPointer>.size
        let source = g_source_new(functions, guint(size))!
        stateSlot(of: source).initialize(to: Unmanaged.passRetained(state).toOpaque())
        return source
    }

    /// The state of `source`, a source this type made.
    static func state(of source: UnsafeMutablePointer<GSource>) -> AttachmentState {
        Unmanaged<AttachmentState>.fromOpaque(stateSlot(of: source).pointee).takeUnretainedValue()
    }

    /// Releases the state (finalize: GLib frees the source right after).
    fileprivate static func releaseState(of source: UnsafeMutablePointer<GSource>) {
        Unmanaged<AttachmentState>.fromOpaque(stateSlot(of: source).pointee).release()
    }

    private static func stateSlot(
        of source: UnsafeMutablePointer<GSource>
    ) -> UnsafeMutablePointer<
        UnsafeMutableRawPointer
    > {
        (UnsafeMutableRawPointer(source) + stateOffset).assumingMemoryBound(to: UnsafeMutableRawPointer.self)
    }
}

/// GLib's prepare: the loop publishes that it sleeps (or says it has work now). TRUE dispatches
/// without polling; otherwise GLib polls the loop's descriptor and the source's timerfd, armed at
/// the loop's next deadline to the nanosecond, with no timeout of the source's own (without a
/// timerfd: at most `timeout` milliseconds, rounded up from the loop's next timer, so that the
/// host never dispatches early).
private func prepareAttachmentGSource(
    _ source: UnsafeMutablePointer<GSource>?, _ timeout: UnsafeMutablePointer<gint>?
)
    -> gboolean
{
    let state = AttachmentGSource.state(of: source!)
    trap(
        unless: state.loop.isOnOwnThread,
        "RunLoopKitGLib: a GMainContext that \(state.loop) is attached to is iterated on a thread that is not the loop's own; iterate it on the loop's thread"
    )
    let wait = state.loop.prepareForHost(in: state.mode)
    state.isPrepared = true
    state.deadline = wait.deadline
    if let timer = state.timer {
        if wait.isReady || wait.deadline.map({ $0 <= .now }) == true {
            timeout?.pointee = 0
            return 1
        }
        // The timerfd ends GLib's poll at the deadline; GLib's timeout is left unlimited.
        timer.arm(at: wait.deadline)
        timeout?.pointee = -1
        return 0
    }
    let milliseconds = wait.timeoutMilliseconds()
    timeout?.pointee = milliseconds
    return wait.isReady || milliseconds == 0 ? 1 : 0
}

/// GLib's check, after its poll: dispatch when the loop's descriptor is readable (work posted,
/// a descriptor source ready) or the wait's deadline (the next timer) has passed.
private func checkAttachmentGSource(_ source: UnsafeMutablePointer<GSource>?) -> gboolean {
    let state = AttachmentGSource.state(of: source!)
    // An expired timerfd polls readable until read, prepared or not.
    if let timer = state.timer, g_source_query_unix_fd(source, state.timerTag).rawValue & G_IO_IN.rawValue != 0 {
        timer.consumeExpiry()
    }
    guard state.isPrepared else { return 0 }
    let revents = g_source_query_unix_fd(source, state.descriptorTag)
    if revents.rawValue & G_IO_IN.rawValue != 0 { return 1 }
    if let deadline = state.deadline, ContinuousClock.now >= deadline { return 1 }
    return 0
}

/// GLib's dispatch: one pass of the loop that never sleeps (Loop.dispatchForHost). GLib blocks
/// the source while it dispatches, so a GLib loop nested in one of the loop's callbacks does
/// not drive the loop (the source does not set G_SOURCE_CAN_RECURSE).
private func dispatchAttachmentGSource(
    _ source: UnsafeMutablePointer<GSource>?, _ callback: GSourceFunc?, _ userData: gpointer?
) -> gboolean {
    let state = AttachmentGSource.state(of: source!)
    // GLib dispatches a source it flagged ready in this iteration's prepare or check; should it
    // ever dispatch one it did not prepare, the loop gets its prepare first.
    if !state.isPrepared { _ = state.loop.prepareForHost(in: state.mode) }
    state.isPrepared = false
    state.deadline = nil
    state.loop.dispatchForHost()
    return 1 // G_SOURCE_CONTINUE: only detach, or the loop's end, removes the source.
}

/// GLib's finalize, when the last reference to the source goes (after detach or the loop's
/// end), on whichever thread dropped it: releases the state.
private func finalizeAttachmentGSource(_ source: UnsafeMutablePointer<GSource>?) {
    AttachmentGSource.releaseState(of: source!)
}
