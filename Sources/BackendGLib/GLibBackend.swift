#if GLib
internal import CGLib
internal import CRunLoopSupport
import Glibc
import RunLoopCore
internal import RunLoopGSourceSupport
import Synchronization

/// The GLib backend: a loop that serves RunLoopKit's descriptors, timers and wakes **and** every
/// GLib source attached to a `GMainContext` (timeouts, idle callbacks, fd watches, a GTK
/// application's display connection).
///
/// The main loop (`Loop.main` on `BackendKind.glib`) waits on GLib's global default context
/// (`g_main_context_default()`), so GLib code that attaches sources with a `NULL` context, as
/// `g_timeout_add` and `g_idle_add` do, is served by `Loop.main.run()`. Every other loop gets a
/// fresh context of its own, or the one you give: make its backend with ``factory(context:)``.
///
/// ## How a wait works
/// GLib's iteration is split as GLib allows, so that its callbacks never run inside the wait
/// (where Core holds the backend lock and counts the loop asleep): the wait acquires the
/// context, runs `g_main_context_prepare` and `g_main_context_query` for GLib's descriptors and
/// timeout, waits itself in `ppoll` over GLib's descriptors and Core's, reports Core's ready
/// descriptors, runs `g_main_context_check`, and releases the context. The callbacks of the
/// sources it found ready run afterwards, in ``dispatchOwnSources()`` (`g_main_context_dispatch`),
/// which Core calls as a phase of the pass, outside every lock: a callback may run this loop
/// nested, or a nested `GMainLoop` (as a GTK dialog does).
///
/// - Core's descriptors are level-triggered, as on every backend (`POLLIN | POLLRDHUP` for
///   readable, `POLLOUT` for writable; hang-ups and errors always reported).
/// - RunLoopKit's timers keep their nanosecond precision (the contract's T8): the timeout is
///   Core's own, rounded up to the nanosecond, unless one of GLib's sources is due sooner.
///   GLib's own sources keep GLib's behaviour: their timeouts are whole milliseconds, as in
///   `g_main_loop_run`.
/// - The waker is `g_main_context_wakeup`, safe from any thread; GLib wakes the context
///   itself when another thread attaches a source to it.
///
/// ## Nested GLib loops
/// A callback that runs a `GMainLoop` on the context (a GTK 3 modal dialog, a synchronous
/// helper), or calls `g_main_context_iteration`, iterates the context outside the loop's wait.
/// The loop's work goes on there (the contract's G5): a GSource of the backend's own, attached
/// when the loop is created and inert in the loop's own waits, serves the mode of the run that
/// GLib's iteration interrupted, on the loop's thread, through the embedding API — its prepare
/// publishes that the loop sleeps (`Loop.prepareForHost(in:)`), GLib polls the mode's
/// descriptors and a timerfd armed at its next deadline, and its dispatch is one pass that never
/// sleeps (`Loop.dispatchForHost()`), whose waits poll the loop's descriptors only (GLib's
/// sources are the nested GLib loop's to dispatch). A `stop()` made in that pass stops the
/// interrupted run. A GLib loop nested in one of that pass's own callouts is not served (GLib does
/// not dispatch a source while dispatching it), nor are GLib iterations outside a run.
///
/// A run's mode with no RunLoopKit item is empty, and the run returns at once, whatever GLib
/// sources the context holds: to run for GLib's sources alone, keep something in the mode (a
/// port, or a timer far away).
///
/// ## Owning the context
/// As `g_main_loop_run` does, a run acquires the context when it begins and releases it when it
/// ends (nested runs included; the contract's G3): the loop's thread owns it for the whole run,
/// in every callout, so `g_main_context_is_owner` is true there and `g_main_context_invoke` from
/// another thread queues its function for the loop's thread instead of running it on the
/// caller. A loop other than the main loop also pushes its context as its thread's default
/// (`g_main_context_push_thread_default`) from its creation to its teardown, on its own thread
/// (G4): GIO delivers the callbacks of async calls made there to this loop.
///
/// While another thread owns the context (one running `g_main_loop_run` on the same context),
/// the loop cannot serve GLib's sources, and never runs a GLib callback: it waits for its own
/// descriptors and timers only, a millisecond at a time, until a wait finds the context free and
/// takes it for the rest of the run. A context owned elsewhere when a loop is created is not
/// pushed as its thread's default.
///
/// Used on its loop's thread, except for ``waker``; ``context`` may be used from any thread,
/// as GLib allows (attach sources to it from anywhere).
public final class GLibBackend: Backend, OwnSourcePhase {
    /// Always `BackendKind.glib`.
    public let kind: BackendKind = .glib
    /// `g_main_context_wakeup` on the backend's context: safe from any thread; a wake while one
    /// is pending costs no system call.
    public var waker: any BackendWaker { glibWaker }

    /// None: GLib's sources are GLib callbacks that only this loop's pass runs. To run a loop
    /// inside GLib's own main loop instead, use the `RunLoopKitGLib` product.
    public var embedding: EmbeddingSupport {
        .unsupported(
            reason:
                "a GLib-backed loop is driven by its own waits over a GMainContext; to put a loop inside GLib's main loop, use RunLoopKitGLib with the epoll or io_uring backend"
        )
    }

    /// GLib's sources are served as a phase of the pass: Core makes every wait reach the
    /// backend, and calls the backend's `OwnSourcePhase` members (``dispatchOwnSources()``
    /// and the moments of the loop's life).
    public var ownSources: OwnSourceServing { .passPhase(self) }

    /// The `GMainContext *` the loop serves: attach GLib sources to it (from any thread) and
    /// the loop's runs dispatch them. The backend holds a reference until it is released, when
    /// the loop's thread exits.
    public let context: OpaquePointer

    let glibWaker: GLibWaker
    /// Core's descriptors, in the order they sit at the front of `pollSet`.
    var registrations: [DescriptorRegistration] = []
    /// Where each of Core's descriptors sits in `registrations`.
    var indexByDescriptor: [Int32: Int] = [:]
    /// `registrations` changed since `pollSet`'s front was last written.
    var registrationsChanged = false
    /// What `ppoll` waits on: Core's descriptors first, then GLib's (`GPollFD` has the layout
    /// of `struct pollfd` on Linux; GLib itself passes one for the other).
    var pollSet: [GPollFD] = Array(repeating: GPollFD(), count: 64)
    /// Core's descriptors as the next `ppoll` gets them, readable from any thread: for tests that
    /// check what the backend watches without trusting Core's bookkeeping (with epoll they read
    /// the kernel's interest set; a `ppoll` set exists in the kernel only while a wait lasts).
    /// Updated by register and unregister only, never by a pass; emptied when the backend goes.
    package let watchedDescriptors = WatchedDescriptors()
    /// The last wait's `g_main_context_check` found sources ready: `dispatchOwnSources()` runs
    /// them.
    var dispatchPending = false
    /// One of GLib's descriptors was ready in the last wait, not for this backend's waker.
    var glibWoke = false
    /// How many writes of GLib's wake-up descriptor the waker had made before the last wait's
    /// poll: one made since may make the next wait find it readable for the waker's sake.
    var writesBeforeLastPoll = 0
    /// One entry per active run of the loop, innermost last: whether that run holds an
    /// acquisition of the context (`g_main_context_acquire`), released when it ends. A run
    /// that began while another thread owned the context holds none until one of its waits
    /// finds the context free. Empty when no run is active (a backend driven directly, by the
    /// conformance kit: each wait then acquires and releases the context itself). On the loop's
    /// thread only.
    var runAcquisitions: [Bool] = []
    /// The context was pushed as the loop's thread's default (`loopDidBindToOwnThread()`), to be
    /// popped when the loop ends.
    var isThreadDefault = false
    /// What GLib's thread-default stack holds for the push: the context, or NULL for GLib's
    /// global default context (which GLib records so).
    var threadDefaultEntry: OpaquePointer?

    /// The source that serves the loop in GLib iterations other than this backend's waits (a
    /// nested `GMainLoop` run from a callout): attached at the loop's creation, destroyed at its
    /// end (see `NestedIterationGSource`). On the loop's thread, except its attach.
    var nestedSource: UnsafeMutablePointer<GSource>?
    /// True while a wait prepares, polls and checks the context itself: the nested-iteration
    /// source is inert then (the wait polls Core's descriptors and timeout on its own).
    var isInOwnWait = false
    /// The nested-iteration source removed its descriptors in this wait's prepare: GLib wrote
    /// its wake-up descriptor for the change, which is no wake of the loop's.
    var nestedSourceChangedPolls = false
    /// Core's descriptors as the last `hostWillWait()` found them (descriptor, GLib's
    /// events): what the nested-iteration source has GLib poll. Written with the backend lock
    /// held; read on the loop's thread.
    var hostDescriptors: [(descriptor: Int32, events: UInt32)] = []
    /// Counts the changes of ``hostDescriptors``.
    var hostDescriptorsGeneration: UInt64 = 0
    /// While the nested-iteration source dispatches a pass: how many runs were active before
    /// it. The pass's waits (and the drain after it), at most one run deeper, poll Core's
    /// descriptors only: GLib's sources are the iterating GLib loop's to dispatch. A run nested
    /// deeper, in one of the pass's callouts, waits as usual.
    var foreignDispatchBase: Int?

    /// Creates a backend over a fresh `GMainContext` of its own.
    ///
    /// - Throws: `BackendError.unavailable` when the process is out of descriptors (the
    ///   context needs one for its wake-up).
    public convenience init() throws {
        let context = try Self.makingContext { g_main_context_new() }
        self.init(context: context)
        g_main_context_unref(context)
    }

    /// Runs `make` (which creates a `GMainContext`) once a descriptor is known to be free.
    ///
    /// GLib gives up on the whole process (`g_error`, an abort) when it cannot open the
    /// descriptor of a new context's wake-up; so one of the same kind (an eventfd, GLib's
    /// `GWakeup` on Linux) is opened here first and closed just before: running out of
    /// descriptors becomes an error the caller can handle. (Another thread opening one in between
    /// can still take it; the window is as small as it can be made from outside GLib.)
    static func makingContext(_ make: () -> OpaquePointer?) throws -> OpaquePointer {
        let reserved = eventfd(0, Int32(EFD_CLOEXEC))
        guard reserved >= 0 else {
            throw BackendError.unavailable(.glib, .other(SystemError("g_main_context_new", errno: currentErrno())))
        }
        close(reserved)
        guard let context = make() else {
            throw BackendError.unavailable(.glib, .other(SystemError("g_main_context_new", errno: ENOMEM)))
        }
        return context
    }

    /// Creates a backend over `context` (a `GMainContext *`), which it references until it is
    /// released.
    ///
    /// One loop at a time may serve a context. GLib's global default context is the main
    /// loop's (`BackendKind.glib` makes it so); give it to another loop only if the main loop
    /// does not run on GLib.
    public init(context: OpaquePointer) {
        self.context = g_main_context_ref(context)
        glibWaker = GLibWaker(context: context)
        // Runs nest a few deep at most: appending within this capacity allocates nothing.
        runAcquisitions.reserveCapacity(16)
    }

    deinit {
        if let nestedSource { ObjectGSource.destroy(nestedSource) }
        watchedDescriptors.set([])
        g_main_context_unref(context)
    }

    /// A factory for loops whose backend serves `context` (a `GMainContext *`), for
    /// `Loop.current(creatingWith:)` or `LoopThread(name:backend:)`; the factory references the
    /// context while it exists.
    public static func factory(context: OpaquePointer) -> BackendFactory {
        let shared = SharedContext(context)
        return BackendFactory(kind: .glib) { GLibBackend(context: shared.context) }
    }

    /// The factory of `BackendKind.glib`: the main loop's backend serves GLib's global default
    /// context, every other loop's a fresh context.
    public static var builtInFactory: BackendFactory {
        BackendFactory(
            kind: .glib, make: { try GLibBackend() },
            makeForMainLoop: {
                // GLib creates the default context on first use, with its wake-up descriptor.
                GLibBackend(context: try makingContext { g_main_context_default() })
            })
    }

    // MARK: - Registrations

    /// Starts polling `descriptor` for `interest`.
    ///
    /// - Throws: `SystemError` (named `ppoll`): `EBADF` when negative or closed, `EEXIST` when
    ///   already registered, `EPERM` for a file that does not support polling, a regular file or
    ///   directory (what `epoll_ctl` answers in the epoll backend; `poll` itself would report
    ///   such a file always ready).
    public func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        guard indexByDescriptor[descriptor] == nil else { throw SystemError("ppoll", errno: EEXIST) }
        guard let file = FileIdentity(of: descriptor) else { throw SystemError("ppoll", errno: EBADF) }
        // poll(2) would call a regular file always ready; the kernel's own probe says which files
        // support readiness, as epoll_ctl decides in the epoll backend.
        switch rlk_supports_polling(descriptor) {
        case 1: break
        case 0: throw SystemError("ppoll", errno: EPERM)
        default: throw SystemError("ppoll", errno: currentErrno())
        }
        indexByDescriptor[descriptor] = registrations.count
        registrations.append(
            DescriptorRegistration(descriptor: descriptor, token: token, interest: interest, file: file))
        registrationsChanged = true
        watchedDescriptors.set(registrations.map(\.descriptor))
    }

    /// Stops polling `descriptor`; one already closed, or not registered, is no error. No later
    /// wait reports it.
    public func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        guard let index = indexByDescriptor.removeValue(forKey: descriptor) else { return }
        let last = registrations.removeLast()
        if index < registrations.count {
            registrations[index] = last
            indexByDescriptor[last.descriptor] = index
        }
        registrationsChanged = true
        watchedDescriptors.set(registrations.map(\.descriptor))
    }

    // MARK: - GLib's sources

    /// Whether the last wait ended for GLib's sake: its `g_main_context_check` found sources
    /// ready, or one of GLib's descriptors was ready (its wake-up, written by
    /// `g_main_context_wakeup` or by a source attached from another thread, asks for an
    /// iteration: the loop makes a pass).
    public var hasOwnSourcesReady: Bool { dispatchPending || glibWoke }

    // MARK: - Owning the context

    /// Acquires the context for the run that begins (`g_main_context_acquire`, recursive on the
    /// owning thread), as `g_main_loop_run` does: from now until the run ends, the loop's thread
    /// owns the context, inside callouts too, so `g_main_context_is_owner` is true there and
    /// `g_main_context_invoke` from another thread queues its function for this thread instead
    /// of running it where it was called. When another thread owns the context, the run holds
    /// none, and each of its waits tries again (see `wait(timeout:into:)`).
    public func runWillBegin() {
        runAcquisitions.append(g_main_context_acquire(context) != 0)
    }

    /// Releases the acquisition the ending run holds, if any.
    public func runDidEnd() {
        guard let acquired = runAcquisitions.popLast() else { return }
        if acquired { g_main_context_release(context) }
    }

    /// Makes the context the thread's default (`g_main_context_push_thread_default`, which
    /// acquires it) for the loop's life, so that GIO delivers the callbacks of async calls made
    /// on this thread to this loop, and the thread owns the context between runs too. When
    /// another thread owns the context now (a context given to several loops or threads), it is
    /// not pushed: GLib would refuse with a critical warning.
    public func loopDidBindToOwnThread() {
        guard !isThreadDefault, g_main_context_acquire(context) != 0 else { return }
        g_main_context_push_thread_default(context)
        g_main_context_release(context)
        threadDefaultEntry = g_main_context_get_thread_default()
        isThreadDefault = true
    }

    /// Pops the thread's default context pushed at the loop's creation, if it is still on top
    /// of the thread's stack (GLib's own thread-exit cleanup may have popped it already, which
    /// released it; code that pushed another one and never popped it leaves it to that cleanup).
    public func loopWillEnd() {
        if let source = nestedSource {
            nestedSource = nil
            ObjectGSource.destroy(source)
        }
        guard isThreadDefault else { return }
        isThreadDefault = false
        // No run is active here: the thread owns the context only through the push, unless
        // GLib's cleanup released it (an empty stack also reads NULL).
        guard g_main_context_is_owner(context) != 0, g_main_context_get_thread_default() == threadDefaultEntry else {
            return
        }
        g_main_context_pop_thread_default(context)
    }

    /// Runs the callbacks of the GLib sources the last wait found ready
    /// (`g_main_context_dispatch`, with the context acquired); returns whether there were any.
    ///
    /// Re-entrant: a callback may run this loop nested, whose wait prepares the context again
    /// (GLib then drops what this dispatch had not reached yet; the nested pass finds it ready
    /// again and runs it), or a nested `GMainLoop` on the same context.
    public func dispatchOwnSources() -> Bool {
        guard dispatchPending else { return false }
        dispatchPending = false
        // Another thread took the context between the wait and now: it dispatches them.
        guard g_main_context_acquire(context) != 0 else { return false }
        g_main_context_dispatch(context)
        g_main_context_release(context)
        // A GLib loop nested in a callback that quit between the source's prepare and its
        // dispatch: the loop must not stay published asleep for a host that no longer looks.
        if let nestedSource { NestedIterationGSource.state(of: nestedSource).endPreparedWait() }
        return true
    }

    // MARK: - Serving the loop from GLib iterations of others

    /// Attaches the source that serves `loop`'s work whenever GLib iterates the context on the
    /// loop's thread during a run, outside this backend's waits (a modal `GMainLoop` run from a
    /// callout; contract rule G5): see `NestedIterationGSource`.
    public func loopDidCreate(_ loop: Loop) {
        guard nestedSource == nil else { return }
        nestedSource = NestedIterationGSource.attach(for: loop, backend: self, to: context)
    }

    /// Takes Core's descriptors for the nested-iteration source (`Loop.prepareForHost`, with
    /// the backend lock held).
    public func hostWillWait() {
        let current = registrations.filter { !$0.failed }.map { registration in
            var events: UInt32 = 0
            if registration.interest.contains(.readable) { events |= G_IO_IN.rawValue }
            if registration.interest.contains(.writable) { events |= G_IO_OUT.rawValue }
            return (descriptor: registration.descriptor, events: events)
        }
        guard !current.elementsEqual(hostDescriptors, by: { $0 == $1 }) else { return }
        hostDescriptors = current
        hostDescriptorsGeneration &+= 1
    }

    /// Runs `body` (the nested-iteration source's pass) with waits over Core's descriptors only.
    func servesForeignIteration(_ body: () -> Void) {
        let previous = foreignDispatchBase
        foreignDispatchBase = runAcquisitions.count
        defer { foreignDispatchBase = previous }
        body()
    }
}

/// The descriptors a GLib backend watches, shared with tests (see
/// `GLibBackend.watchedDescriptors`); it does not keep the backend alive.
package final class WatchedDescriptors: Sendable {
    private let descriptors = Mutex<[Int32]>([])
    package var current: [Int32] { descriptors.withLock { $0 } }
    func set(_ new: [Int32]) { descriptors.withLock { $0 = new } }
}

/// A `GMainContext` referenced while a factory exists, so that the factory can be `Sendable`
/// (GLib's contexts are thread-safe).
private final class SharedContext: @unchecked Sendable {
    let context: OpaquePointer
    init(_ context: OpaquePointer) { self.context = g_main_context_ref(context) }
    deinit { g_main_context_unref(context) }
}
#endif
