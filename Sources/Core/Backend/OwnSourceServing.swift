/// Whether and how a backend serves sources of its own library besides Core's descriptors: a
/// backend's ``Backend/ownSources``.
///
/// Each way has its rules; Core keeps them for every backend alike, and a backend's library
/// callbacks must keep the ones the way states.
public enum OwnSourceServing {
    /// The backend serves Core's descriptors and nothing else (the epoll and io_uring backends).
    case none

    /// The backend's library runs its own callbacks inside ``Backend/wait(timeout:into:)``, in
    /// the same call that polls (the libevent backend: `event_base_loop` polls and dispatches
    /// in one call, so the events a user adds to its base run there).
    ///
    /// The rules: the callbacks run on the loop's thread with the backend lock held, so they
    /// must not run the loop (nested or not), nor register or unregister a descriptor source of
    /// it, nor end the library's loop early (the wait would miss Core's ready descriptors).
    /// They run in the waits Core makes: whenever the loop sleeps, and when it polls with at
    /// least one of Core's descriptors registered (a poll with none is skipped).
    case insideWait

    /// The backend's library sources run as a phase of every pass (``Loop/PassPhase/backendSources``),
    /// through `phase`: the GLib backend, whose `GMainContext` sources may run a loop nested.
    ///
    /// The rules: every wait reaches the backend, even a poll with no descriptor of Core's
    /// registered; a wait that returns with no descriptor event but with
    /// ``OwnSourcePhase/hasOwnSourcesReady`` true ends the loop's sleep; the phase's
    /// ``OwnSourcePhase/dispatchOwnSources()`` runs the callbacks **without** the backend lock
    /// and outside every lock of the loop, so a callback may run any loop, this one included,
    /// nested. The lifecycle calls of ``OwnSourcePhase`` say when each is made and with which
    /// lock.
    case passPhase(any OwnSourcePhase)

    /// `none`, `inside its wait` or `as a pass phase`, for messages.
    public var name: String {
        switch self {
        case .none: "none"
        case .insideWait: "inside its wait"
        case .passPhase: "as a pass phase"
        }
    }
}

/// What a backend that serves its own library's sources as a pass phase
/// (``OwnSourceServing/passPhase(_:)``) gives Core: the phase itself, and the moments of the
/// loop's life the library must hear about. Usually the backend itself.
///
/// Every requirement is called on the loop's thread. None has a default: a backend states what
/// it does at each moment, even when it is nothing.
public protocol OwnSourcePhase: AnyObject {
    /// Whether the last ``Backend/wait(timeout:into:)`` ended for the library's sources: found
    /// some ready to dispatch, or the library woke its loop (GLib's `g_main_context_wakeup`).
    /// Core ends its sleep when a wait returns so with no descriptor event (otherwise it takes
    /// an empty-handed return for an interrupted wait and waits again). Read with the backend
    /// lock held.
    var hasOwnSourcesReady: Bool { get }

    /// Runs the callbacks of the library's sources that the last wait found ready; returns
    /// whether any ran. Called after the pass's ready descriptors, **without** the backend
    /// lock: a callback may run a loop nested, this loop included, which calls the backend
    /// again, and another thread may register or unregister descriptors meanwhile, so it must
    /// not touch what those calls change.
    func dispatchOwnSources() -> Bool

    /// The loop over this backend was created (every loop, the main loop included): called
    /// once, on the creating thread, before the loop is shared and before any run. A backend
    /// that drives the loop from its library's own iterations (the GLib backend serves the
    /// loop's work from a GLib loop nested in a callout, through the embedding API) keeps
    /// `loop`, weakly: the loop owns its backend.
    func loopDidCreate(_ loop: Loop)

    /// A loop other than the main loop was bound to the calling thread, its own (the main loop,
    /// which may be created on any thread, never gets this call): called once, with the backend
    /// lock held, before any run. The GLib backend makes its context the thread's default here.
    func loopDidBindToOwnThread()

    /// A run of the loop begins (nested runs included): called with the backend lock held,
    /// before the run's entry observers; every call is matched by one ``runDidEnd()``, in
    /// nesting order. The GLib backend acquires its context here, as `g_main_loop_run` does.
    func runWillBegin()

    /// The run that the latest unmatched ``runWillBegin()`` began has ended: called with the
    /// backend lock held, after the run's exit observers.
    func runDidEnd()

    /// A host is about to wait for the loop: ``Loop/prepareForHost(in:)`` registered the mode's
    /// descriptors and calls this with the backend lock held, before it decides the wait. For a
    /// backend that serves the loop from its library's own iterations through the embedding API
    /// (the GLib backend's source for GLib loops nested in callouts, rule G5): it takes Core's
    /// descriptors for that wait here.
    func hostWillWait()

    /// The loop's thread is exiting and the loop is being torn down: called with the backend
    /// lock held, after the loop's sources were told and before the backend is released.
    func loopWillEnd()
}
