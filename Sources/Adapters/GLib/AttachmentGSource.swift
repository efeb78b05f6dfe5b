internal import CGLib
import Glibc
internal import RunLoopGSourceSupport
import RunLoopKit

/// What the GLib source of an attachment keeps (the object its `ObjectGSource` owns; the
/// source's finalize releases it).
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

    init(loop: Loop, mode: Loop.Mode, registry: GLibAttachmentRegistry) {
        self.loop = loop
        self.mode = mode
        self.registry = registry
        timer = DeadlineTimer()
    }
}

/// The GLib source (`GSource`) that drives an attached loop inside GLib's main loop: its
/// functions. Not a `Loop.Source`: the loop's own sources are served by the loop's passes, which
/// this GSource's dispatch runs.
enum AttachmentGSource {
    /// One table for all attachments' sources.
    nonisolated(unsafe) private static let functions = ObjectGSource.functions(
        prepare: prepareAttachmentGSource, check: checkAttachmentGSource, dispatch: dispatchAttachmentGSource)

    /// A new, unattached source (one reference, the caller's) that owns `state`.
    static func make(with state: AttachmentState) -> UnsafeMutablePointer<GSource> {
        ObjectGSource.make(with: functions, owning: state)
    }

    /// The state of `source`, a source this type made.
    static func state(of source: UnsafeMutablePointer<GSource>) -> AttachmentState {
        ObjectGSource.object(of: source)
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
    state.timer?.consumeExpiry(in: source!)
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
