/// The one thing a backend abstracts: wait on a set of descriptors with a timeout, and be
/// woken from another thread.
///
/// Everything else (modes, timers, ordering, observers, which descriptors to watch and when)
/// lives in Core. RunLoopKit ships four backends (`EpollBackend`, `URingBackend`,
/// `LibeventBackend`, `GLibBackend`); this protocol is public so that a backend can also be written outside
/// RunLoopKit and a ``Loop`` run on it: give Core a ``BackendFactory`` for it, through
/// ``Loop/current(creatingWith:)``, ``Loop/main(creatingWith:)`` or
/// `LoopThread(name:backend:)`. The `RunLoopKitBackendConformance` library checks a backend
/// against the contract below.
///
/// ## The contract
///
/// **Identity.** ``kind`` is constant: one of the built-in kinds when the backend stands in
/// for one (a wrapper), otherwise a kind of its own, `BackendKind(name:)`.
///
/// **Threads.** A backend belongs to one loop. Core never makes two calls to it at once: every
/// call other than the waker's happens with the loop's backend lock held, which orders them.
/// Most come from the loop's thread, but not all: a thread that invalidates or removes a
/// descriptor source calls ``unregister(_:token:)`` (and ``register(_:token:interest:)``)
/// itself, so that the descriptor has left the backend when that call returns — never during a
/// ``wait(timeout:into:)``, which the loop makes with the lock held (it wakes the loop first).
/// The main loop's backend may be created on one thread and used on another. A backend must
/// therefore tie no state to a thread (no thread-local storage, no single-issuer rings). Only
/// ``waker`` is used from any thread at any time. The backend is released on the loop's
/// thread when that thread exits; its waker may live on (see ``BackendWaker``).
///
/// **Registrations.** Core registers a descriptor at most once at a time, with a fresh
/// ``Token``; to change a registration it unregisters and registers again. Interest is
/// ``Interest/readable``,
/// ``Interest/writable`` or both. Core calls
/// ``unregister(_:token:)`` before the descriptor is closed when the user follows the rules,
/// but a user may close it first: unregistering a descriptor that was closed (or never
/// registered) is not an error. After ``unregister(_:token:)`` returns, no wait reports its
/// token, even when the descriptor was ready. A backend that re-arms a watch by descriptor
/// number (a one-shot poll) must not report, under the old token, a different file that took
/// over the number.
///
/// **Readiness.** Level-triggered: a descriptor that stays ready is reported by every wait, so
/// a handler that reads only part of what is there hears about the rest in the next pass. A
/// wait reports at most one ``ReadyEvent`` per registered descriptor, with the token it was
/// registered under; ``Readiness/readable`` and ``Readiness/writable`` only for what was asked,
/// ``Readiness/hangup`` and ``Readiness/error`` whenever they happen (Core tells every source
/// about them). The waker's own readiness is never an event.
///
/// **Waiting.** ``wait(timeout:into:)`` returns when a registered descriptor is ready, the
/// waker was woken (before or during the wait), or the timeout passed. A timeout is rounded up
/// to the backend's clock, never down: a wait with nothing to report never returns before its
/// timeout, except when interrupted. An interrupted wait (`EINTR`: a signal was handled on the
/// loop's thread) returns at once with no events — it must neither throw nor restart with the
/// whole timeout, which would starve timers; Core waits again for what is left. Core treats any
/// empty-handed early return that way, so a spurious one costs a wait, not correctness.
///
/// **Waking.** A wake before a wait makes that wait return at once; wakes coalesce (the next
/// wait consumes every wake posted before it, and the wait after that sleeps); a wake from
/// another thread during a wait ends it. Core wakes the backend only when the loop sleeps or
/// is about to, at most once per sleep, but a wake may also arrive late, after the wait it was
/// meant for returned: the next wait then returns at once, and Core waits again.
///
/// **Errors.** Failures are thrown as ``SystemError``, naming the C function and its `Errno`;
/// the built-in backends answer alike: `badFileDescriptor` when registering a negative or
/// closed descriptor, `fileExists` when registering one already registered, `notPermitted` for a file that
/// cannot be polled (a regular file). A backend that cannot start on this machine throws
/// ``BackendError/unavailable(_:_:)`` from its factory, saying why. What Core does with them:
/// a failed register leaves the sources on that descriptor unwatched, reports it on standard
/// error and invalidates them; a failed unregister is ignored (the descriptor is forgotten all
/// the same); a failed wait is a broken invariant and stops the process with the error.
///
/// **Two values every backend states.** ``embedding`` says whether a host event loop can wait
/// for the backend, on which descriptor, and what must happen before it does
/// (``EmbeddingSupport``). ``ownSources`` says whether the backend serves sources of its own
/// library besides Core's descriptors, and how (``OwnSourceServing``: not at all, inside its
/// wait, or as a phase of the pass, each with its rules). Neither has a default: a wrapper
/// states and forwards both, so it cannot silently lose a capability of the backend it wraps.
public protocol Backend: AnyObject {
    /// Which kind of backend this is; constant.
    var kind: BackendKind { get }

    /// The waker that interrupts ``wait(timeout:into:)``; safe to use from any thread, and
    /// after the backend is released.
    var waker: any BackendWaker { get }

    /// Starts watching `descriptor` for `interest`; its events carry `token`.
    ///
    /// A descriptor is registered at most once at a time.
    ///
    /// - Throws: ``SystemError``: `badFileDescriptor` for a negative or closed descriptor,
    ///   `fileExists` when it is registered already, `notPermitted` when it cannot be polled.
    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError)

    /// Stops watching `descriptor`. A descriptor that was already closed, or is not
    /// registered, is not an error.
    ///
    /// After this returns, no later wait reports `token`.
    func unregister(_ descriptor: Int32, token: Token) throws(SystemError)

    /// Sleeps until a registered descriptor is ready, `timeout` passes, or the waker is woken.
    ///
    /// The wait may also return early with nothing to report (a signal interrupted it): it
    /// must then return, not restart with the whole timeout; Core computes what is left. A wait
    /// that returns with no event before its timeout is taken for a wake or an interruption:
    /// Core's own sleep flags tell it which, so the wait reports nothing about the waker.
    ///
    /// - Parameters:
    ///   - timeout: how long to wait at most; `nil` waits until an event, `.zero` (or less)
    ///     polls. The backend rounds it up to its clock's resolution, never down.
    ///   - events: cleared, then filled with the ready descriptors (not the waker); keep its
    ///     capacity, so that a pass allocates nothing.
    /// - Throws: ``SystemError`` when the wait itself fails (never for `EINTR`).
    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError)

    /// Whether a host event loop (GLib's, libuv's, a `poll(2)` loop) can wait for this backend,
    /// on which descriptor, and the step that must come before each host wait; or why not.
    ///
    /// Core reads it when the loop is created, and again before each host wait, with the
    /// backend lock held; it keeps none of it, so a preparation step may capture the backend.
    var embedding: EmbeddingSupport { get }

    /// Whether and how the backend serves sources of its own library besides Core's
    /// descriptors: see ``OwnSourceServing`` for each way's rules. Constant; Core reads it when
    /// the loop is created and when it calls the pass phase's object, and keeps none of it.
    var ownSources: OwnSourceServing { get }
}
