#if GLib
internal import CGLib
import Glibc
import RunLoopCore
internal import RunLoopGSourceSupport

/// What the GLib source that serves a loop in GLib iterations other than its own wait keeps (a
/// nested `GMainLoop` run from a callout, `g_main_context_iteration` called by a callback): the
/// object its `ObjectGSource` owns; the source's finalize releases it.
///
/// Touched on the loop's thread only: its callbacks do nothing elsewhere.
final class NestedIterationState {
    /// The loop the backend serves; weak, the loop owns the backend.
    weak var loop: Loop?
    /// The backend. Unowned, not weak: it destroys the source before it goes (in `loopWillEnd`,
    /// or its `deinit`), and the callbacks touch it only on the loop's thread, after checking
    /// that they are there, where it cannot go meanwhile. A weak reference would give the
    /// backend a side table, and every retain of it (three a pass, from Core's pass phase)
    /// the slow path: 10 % of an empty pass.
    unowned let backend: GLibBackend
    /// Ends GLib's poll at the loop's next deadline, to the nanosecond; nil when the process
    /// could not make one (GLib's millisecond timeout then stands in).
    let timer: DeadlineTimer?
    /// The tags of Core's descriptors, added while the source serves a foreign iteration.
    var descriptorTags: [gpointer] = []
    /// The generation of the backend's snapshot of Core's descriptors the tags are for.
    var descriptorsGeneration: UInt64?
    /// The mode prepared for (Loop.prepareForHost), until check finds nothing or dispatch runs.
    var preparedMode: Loop.Mode?
    /// The prepared wait's deadline.
    var deadline: ContinuousClock.Instant?

    init(loop: Loop, backend: GLibBackend) {
        self.loop = loop
        self.backend = backend
        timer = DeadlineTimer()
    }

    /// Out of foreign iterations: no descriptor of Core's polled by GLib (its own wait polls
    /// them), the timerfd disarmed, so that the source never makes GLib's poll return. Returns
    /// whether it removed descriptors: GLib then writes its wake-up descriptor (as for every
    /// change of a context's polls), which is no wake for the loop.
    func goInert(_ source: UnsafeMutablePointer<GSource>) -> Bool {
        timer?.arm(at: nil)
        guard !descriptorTags.isEmpty else { return false }
        for tag in descriptorTags { g_source_remove_unix_fd(source, tag) }
        descriptorTags.removeAll()
        descriptorsGeneration = nil
        return true
    }

    /// Polls Core's descriptors of the prepared mode (the backend's snapshot, taken in
    /// `hostWillWait`) through GLib.
    func syncDescriptors(_ source: UnsafeMutablePointer<GSource>, with backend: GLibBackend) {
        guard descriptorsGeneration != backend.hostDescriptorsGeneration else { return }
        for tag in descriptorTags { g_source_remove_unix_fd(source, tag) }
        descriptorTags.removeAll()
        for (descriptor, events) in backend.hostDescriptors {
            descriptorTags.append(g_source_add_unix_fd(source, descriptor, GIOCondition(rawValue: events)))
        }
        descriptorsGeneration = backend.hostDescriptorsGeneration
    }

    /// Ends the wait the source prepared, if GLib never dispatched it (the nested loop quit).
    func endPreparedWait() {
        guard preparedMode != nil else { return }
        preparedMode = nil
        deadline = nil
        loop?.cancelHostWait()
    }
}

/// The GSource a GLib backend attaches to its context for its loop (at the loop's creation):
/// inert in the backend's own waits, it serves the loop's work in the mode of the run it
/// interrupts whenever GLib iterates the context otherwise on the loop's thread during a run —
/// a nested `GMainLoop` run from a callout — through the embedding API: prepare is
/// `Loop.prepareForHost(in:)` (the loop publishes that it sleeps, so other threads' posts wake
/// GLib's poll through the backend's waker), GLib polls Core's descriptors and a timerfd armed
/// at the loop's deadline, and dispatch is `Loop.dispatchForHost()`, one pass that never sleeps.
enum NestedIterationGSource {
    nonisolated(unsafe) private static let functions = ObjectGSource.functions(
        prepare: prepareNestedIterationGSource, check: checkNestedIterationGSource,
        dispatch: dispatchNestedIterationGSource)

    /// A new source attached to `context` (the caller holds one reference) for `loop`.
    static func attach(for loop: Loop, backend: GLibBackend, to context: OpaquePointer) -> UnsafeMutablePointer<GSource>
    {
        let source = ObjectGSource.make(with: functions, owning: NestedIterationState(loop: loop, backend: backend))
        g_source_set_name(source, "RunLoopKit nested iterations")
        g_source_set_priority(source, 0) // G_PRIORITY_DEFAULT
        g_source_attach(source, context)
        return source
    }

    static func state(of source: UnsafeMutablePointer<GSource>) -> NestedIterationState {
        ObjectGSource.object(of: source)
    }
}

/// Prepare: inert in the backend's own wait, on another thread, and outside runs; otherwise the
/// loop prepares for a host's wait in the mode of the run that GLib's iteration interrupted.
private func prepareNestedIterationGSource(
    _ source: UnsafeMutablePointer<GSource>?, _ timeout: UnsafeMutablePointer<gint>?
)
    -> gboolean
{
    timeout?.pointee = -1
    let state = NestedIterationGSource.state(of: source!)
    guard let loop = state.loop, loop.isOnOwnThread else { return 0 }
    let backend = state.backend
    guard !backend.isInOwnWait, let mode = loop.currentMode else {
        if state.goInert(source!) { backend.nestedSourceChangedPolls = true }
        return 0
    }
    let wait = loop.prepareForHost(in: mode)
    state.preparedMode = mode
    state.deadline = wait.deadline
    state.syncDescriptors(source!, with: backend)
    // Added the first time it serves (adding a descriptor to an attached source writes GLib's
    // wake-up: attached with it, the source would wake the loop's first wait for nothing).
    if let timer = state.timer, timer.tag == nil { timer.poll(in: source!) }
    if wait.isReady || wait.deadline.map({ $0 <= .now }) == true {
        timeout?.pointee = 0
        return 1
    }
    if let timer = state.timer {
        timer.arm(at: wait.deadline)
    } else {
        timeout?.pointee = wait.timeoutMilliseconds()
    }
    return 0
}

/// Check: ready when a wake of the backend's waker is pending (work posted from another thread),
/// one of Core's descriptors is ready, or the deadline passed; otherwise the prepared wait ends
/// here, so that the loop never stays published asleep once GLib's poll is over.
private func checkNestedIterationGSource(_ source: UnsafeMutablePointer<GSource>?) -> gboolean {
    let state = NestedIterationGSource.state(of: source!)
    guard let loop = state.loop, loop.isOnOwnThread else { return 0 }
    state.timer?.consumeExpiry(in: source!)
    guard state.preparedMode != nil else { return 0 }
    let backend = state.backend
    var ready = backend.glibWaker.isPending || state.deadline.map { ContinuousClock.now >= $0 } == true
    for tag in state.descriptorTags where !ready {
        if g_source_query_unix_fd(source, tag).rawValue != 0 { ready = true }
    }
    if !ready { state.endPreparedWait() }
    return ready ? 1 : 0
}

/// Dispatch: one pass of the loop in the prepared mode that never sleeps, its wait over Core's
/// descriptors alone (GLib's sources are the iterating loop's to dispatch).
private func dispatchNestedIterationGSource(
    _ source: UnsafeMutablePointer<GSource>?, _ callback: GSourceFunc?, _ userData: gpointer?
) -> gboolean {
    let state = NestedIterationGSource.state(of: source!)
    guard let loop = state.loop, loop.isOnOwnThread else { return 1 }
    let backend = state.backend
    guard state.preparedMode != nil || loop.currentMode.map({ loop.prepareForHost(in: $0) }) != nil else { return 1 }
    state.preparedMode = nil
    state.deadline = nil
    var result = Loop.RunResult.timedOut
    backend.servesForeignIteration { result = loop.dispatchForHost() }
    // A stop() made during the pass (by a callout, or from another thread since the prepare)
    // was meant for the loop's run: the interrupted one, which it now stops.
    if result == .stopped { loop.stop() }
    return 1 // G_SOURCE_CONTINUE
}
#endif
