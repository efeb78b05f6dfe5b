/// What a descriptor is watched for.
public struct Interest: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The interest as bits: 1 readable, 2 writable.
    public let rawValue: UInt8
    /// Creates an interest from its bits; bits other than ``readable`` and ``writable`` are
    /// refused by the descriptor sources that take an interest.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data can be read (or the peer closed).
    public static let readable = Interest(rawValue: 1 << 0)
    /// Data can be written.
    public static let writable = Interest(rawValue: 1 << 1)

    /// The interest as `readable`, `writable`, `[readable, writable]` or `[]`.
    public var description: String {
        switch self {
        case .readable: "readable"
        case .writable: "writable"
        case [.readable, .writable]: "[readable, writable]"
        default: "[]"
        }
    }
}

/// What a ready descriptor reported.
public struct Readiness: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The readiness as bits: 1 readable, 2 writable, 4 hang-up, 8 error.
    public let rawValue: UInt8
    /// Creates a readiness from its bits (backends build it from the kernel's event flags).
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data can be read.
    public static let readable = Readiness(rawValue: 1 << 0)
    /// Data can be written.
    public static let writable = Readiness(rawValue: 1 << 1)
    /// The peer hung up (reads return end of file).
    public static let hangup = Readiness(rawValue: 1 << 2)
    /// The descriptor has an error pending.
    public static let error = Readiness(rawValue: 1 << 3)

    /// The reported conditions as a list, for example `[readable, hangup]`.
    public var description: String {
        let names: [(Readiness, String)] = [
            (.readable, "readable"), (.writable, "writable"), (.hangup, "hangup"), (.error, "error"),
        ]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }

    /// Whether a source watching `interest` should hear about this readiness.
    ///
    /// Hang-ups and errors concern every interest: the owner must learn about them to close.
    public func concerns(_ interest: Interest) -> Bool {
        if !isDisjoint(with: [.hangup, .error]) { return true }
        return (contains(.readable) && interest.contains(.readable))
            || (contains(.writable) && interest.contains(.writable))
    }
}

/// An opaque value a backend hands back with each ready event.
///
/// Core gives every registration a fresh token: never zero, never `UInt64.max` (a backend may
/// keep that one for its own use, as the epoll backend does for its waker), and never handed
/// out twice in a process. So an event that arrives for a registration that has since ended
/// (a descriptor closed and reused within one batch) is recognised and dropped in Core, once,
/// for every backend.
public struct Token: Hashable, Sendable, CustomStringConvertible {
    /// The value; a backend stores it and hands it back unchanged.
    public let rawValue: UInt64
    /// Creates a token (Core does; a backend only hands back the ones it was given).
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// The token as `#` and its value, for messages.
    public var description: String { "#\(rawValue)" }
}

/// One ready descriptor, as a backend reports it.
public struct ReadyEvent: Hashable, Sendable {
    /// The token the descriptor was registered with.
    public var token: Token
    /// What the descriptor is ready for.
    public var readiness: Readiness

    /// Creates an event reporting `readiness` for the descriptor registered with `token`.
    public init(token: Token, readiness: Readiness) {
        self.token = token
        self.readiness = readiness
    }
}

/// Wakes a backend's wait from any thread.
///
/// A wake that happens before a wait begins makes that wait return at once; several wakes
/// before one wait are consumed by that wait together (the wait after it sleeps as usual);
/// wakes posted while one is already pending should cost no system call.
///
/// The loop keeps its backend's waker after the backend itself is released (when the loop's
/// thread exits): a `wake()` then must stay harmless — a waker owns what it writes to, or
/// checks that its target still exists.
public protocol BackendWaker: Sendable {
    /// Makes the current or next ``Backend/wait(timeout:into:)`` return. Safe from any thread,
    /// concurrently with everything, including the backend's release.
    func wake()
}

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
/// ``Token``; to change a registration it unregisters and registers again
/// (``modify(_:token:interest:)`` must work all the same). Interest is ``Interest/readable``,
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
/// closed descriptor, `fileExists` when registering one already registered,
/// `noSuchFileOrDirectory` when modifying one that is not, `notPermitted` for a file that
/// cannot be polled (a regular file). A backend that cannot start on this machine throws
/// ``BackendError/unavailable(_:_:)`` from its factory, saying why. What Core does with them:
/// a failed register leaves the sources on that descriptor unwatched, reports it on standard
/// error and invalidates them; a failed unregister is ignored (the descriptor is forgotten all
/// the same); a failed wait is a broken invariant and stops the process with the error.
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

    /// Changes the interest (and token) of a registered descriptor.
    ///
    /// After it returns, events carry the new token and no wait reports the old one.
    ///
    /// Core itself never calls it: it unregisters a descriptor and registers it afresh under a
    /// new token whenever its sources change. It is here for code that drives a backend
    /// directly (the conformance kit checks it). Optional: the default (in an extension)
    /// unregisters the descriptor and registers it again, which cannot tell a descriptor that
    /// was not registered, and passes the new token to ``unregister(_:token:)``; a backend that
    /// needs the old token to unregister, or that can change a registration in place, should
    /// implement it.
    ///
    /// - Throws: ``SystemError``: `noSuchFileOrDirectory` when `descriptor` is not registered.
    func modify(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError)

    /// Stops watching `descriptor`. A descriptor that was already closed, or is not
    /// registered, is not an error.
    ///
    /// After this returns, no later wait reports `token`.
    func unregister(_ descriptor: Int32, token: Token) throws(SystemError)

    /// Sleeps until a registered descriptor is ready, `timeout` passes, or the waker is woken.
    ///
    /// The wait may also return early with nothing to report (a signal interrupted it): it
    /// must then return, not restart with the whole timeout; Core computes what is left.
    ///
    /// - Parameters:
    ///   - timeout: how long to wait at most; `nil` waits until an event, `.zero` (or less)
    ///     polls. The backend rounds it up to its clock's resolution, never down.
    ///   - events: cleared, then filled with the ready descriptors (not the waker); keep its
    ///     capacity, so that a pass allocates nothing.
    /// - Returns: whether a wake of the ``waker`` was consumed by this wait, so that a
    ///   backend's wake can be checked on its own (the conformance checks do). Core does not
    ///   need it: its own sleep flags tell it whether a wait that returned empty-handed was
    ///   woken for this sleep, and it waits again when not.
    /// - Throws: ``SystemError`` when the wait itself fails (never for `EINTR`).
    @discardableResult
    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) -> Bool

    // MARK: - Embedding in a host loop (optional: defaults in an extension)

    /// Whether a host event loop can wait for this backend, and on what: see
    /// ``EmbeddingSupport``. The default is ``EmbeddingSupport/unsupported(reason:)``.
    var embedding: EmbeddingSupport { get }

    /// Called with the backend lock held before a host loop waits on ``embedding``'s descriptor
    /// instead of the loop calling ``wait(timeout:into:)``: hand the kernel whatever it must
    /// know for that descriptor to become readable (io_uring submits its queued polls). The
    /// default does nothing.
    func prepareForHostWait() throws(SystemError)

    // MARK: - A backend that serves another library's sources (optional)

    /// Whether the backend serves sources of its own besides Core's descriptors (GLib's, for a
    /// backend over a `GMainContext`): Core then makes every wait reach the backend, even a poll
    /// with no descriptor registered, and calls ``dispatchOwnSources()`` after it. The default
    /// is `false`.
    var servesOwnSources: Bool { get }

    /// Runs the callbacks of the backend's own sources that the last wait found ready; returns
    /// whether any ran. Only called when ``servesOwnSources`` is true.
    ///
    /// Core calls it on the loop's thread after handling the pass's ready sources, **without**
    /// the backend lock, as a phase of the pass (``Loop/PassPhase/backendSources``): a callback
    /// may run a loop nested, this loop included, which calls the backend again. So it must not
    /// touch what ``register(_:token:interest:)`` and ``unregister(_:token:)`` change, which
    /// another thread may call meanwhile. The default runs nothing.
    func dispatchOwnSources() -> Bool

    /// Whether the last ``wait(timeout:into:)`` ended for the backend's own sources: found some
    /// ready to dispatch, or the library woke its loop (GLib's `g_main_context_wakeup`). Core
    /// ends its sleep when a wait returns so with no descriptor event: a wait that returns
    /// empty-handed is otherwise taken for an interrupted one and made again.
    /// Only read when ``servesOwnSources`` is true, with the backend lock held; the default is
    /// `false`.
    var hasOwnSourcesReady: Bool { get }

    /// A run of the loop begins (nested runs included): called on the loop's thread, with the
    /// backend lock held, before the run's entry observers; every call is matched by one
    /// ``runDidEnd()``, in nesting order. The GLib backend acquires its context here, as
    /// `g_main_loop_run` does. Only called when ``servesOwnSources`` is true; the default does
    /// nothing.
    func runWillBegin()

    /// The run that the latest unmatched ``runWillBegin()`` began has ended: called on the
    /// loop's thread, with the backend lock held, after the run's exit observers. Only called
    /// when ``servesOwnSources`` is true; the default does nothing.
    func runDidEnd()

    /// A loop other than the main loop was created over this backend and bound to the calling
    /// thread, its own (the main loop, which may be created on any thread, never gets this
    /// call): called once, with the backend lock held, before any run. The GLib backend makes
    /// its context the thread's default here. Only called when ``servesOwnSources`` is true;
    /// the default does nothing.
    func loopDidBindToOwnThread()

    /// The loop over this backend was created (every loop, the main loop included): called once,
    /// on the creating thread, before the loop is shared and before any run. A backend that
    /// must drive the loop from its library's own iterations (the GLib backend serves the loop's
    /// work from a GLib loop nested in a callout, through the embedding API) keeps `loop`,
    /// weakly: the loop owns its backend. Only called when ``servesOwnSources`` is true; the
    /// default does nothing.
    func loopDidCreate(_ loop: Loop)

    /// The loop's thread is exiting and the loop is being torn down: called on that thread, with
    /// the backend lock held, after the loop's sources were told and before the backend is
    /// released. Only called when ``servesOwnSources`` is true; the default does nothing.
    func loopWillEnd()
}

/// Whether a host event loop (GLib's, libuv's, a `poll(2)` loop) can wait for a backend.
public enum EmbeddingSupport: Sendable, Hashable, CustomStringConvertible {
    /// A descriptor that becomes readable when a ``Backend/wait(timeout:into:)`` with a zero
    /// timeout would report an event or consume a wake. It stays the backend's: the host polls
    /// it, never reads, writes nor closes it.
    case descriptor(Int32)
    /// The backend offers no such descriptor; `reason` says why, for messages.
    case unsupported(reason: String)

    /// `descriptor 7`, or `unsupported:` and the reason.
    public var description: String {
        switch self {
        case let .descriptor(fd): "descriptor \(fd)"
        case let .unsupported(reason): "unsupported: \(reason)"
        }
    }
}

extension Backend {
    /// Unregisters `descriptor`, then registers it with `interest` and `token` (see the
    /// requirement).
    public func modify(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        try unregister(descriptor, token: token)
        try register(descriptor, token: token, interest: interest)
    }

    /// No descriptor: a backend embeds only when it says so.
    public var embedding: EmbeddingSupport {
        .unsupported(reason: "the \(kind) backend offers no descriptor a host loop could wait on")
    }

    /// Nothing to hand the kernel.
    public func prepareForHostWait() throws(SystemError) {}

    /// Only Core's descriptors.
    public var servesOwnSources: Bool { false }

    /// Nothing to run.
    public func dispatchOwnSources() -> Bool { false }

    /// Nothing ready.
    public var hasOwnSourcesReady: Bool { false }

    /// Nothing to do.
    public func runWillBegin() {}

    /// Nothing to do.
    public func runDidEnd() {}

    /// Nothing to do.
    public func loopDidBindToOwnThread() {}

    /// Nothing to do.
    public func loopDidCreate(_ loop: Loop) {}

    /// Nothing to do.
    public func loopWillEnd() {}
}
