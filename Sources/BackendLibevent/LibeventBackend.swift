#if Libevent
internal import CLibevent
import Glibc
import RunLoopCore

/// The libevent 2.1 backend: one `event_base` per loop, on epoll, with precise timers.
///
/// Level-triggered (`EV_PERSIST` without `EV_ET`). A wait is one `event_base_loop(EVLOOP_ONCE)`,
/// bounded by a one-shot timer event; descriptor callbacks only collect `ReadyEvent`s, which
/// the wait returns to Core (hang-ups and errors completed by `ReadyCollector`). Timeouts
/// are rounded up to libevent's microseconds. Code that wants its own libevent events on the loop reaches the
/// base through `eventBase` or `Loop.withEventBase(_:)`.
///
/// Used on its loop's thread only, except for `waker`.
public final class LibeventBackend: Backend {
    /// Always `BackendKind.libevent`.
    public let kind: BackendKind = .libevent
    /// The eventfd waker, watched by the base: safe from any thread; a wake while one is
    /// pending writes nothing.
    public var waker: any BackendWaker { eventWaker }

    /// None: libevent keeps its own descriptor (epoll's, on Linux) private, and the events a
    /// wait runs are libevent callbacks that only `event_base_loop` calls; a host loop would
    /// have nothing to poll that says when they are due.
    public var embedding: EmbeddingSupport {
        .unsupported(
            reason:
                "libevent's event_base exposes no descriptor that becomes readable when its events are ready; use the epoll or io_uring backend to embed a loop"
        )
    }

    /// Inside its wait: the events code adds to ``eventBase`` run in `event_base_loop`, the
    /// call that polls (see `OwnSourceServing.insideWait` for their rules).
    public var ownSources: OwnSourceServing { .insideWait }

    /// The loop's `event_base` (a `struct event_base *`), for code that adds its own events.
    ///
    /// Valid until the backend is freed, when the loop's thread exits. The base is not
    /// thread-safe (it is created with `EVENT_BASE_FLAG_NOLOCK`): use it on the loop's thread
    /// only. Callbacks of events you add run inside the loop's wait, on the loop's thread; they
    /// must not run the loop nor call `event_base_loopbreak`/`loopexit` (the loop would miss
    /// the descriptors that were ready), and you must `event_del`/`event_free` your events
    /// before the loop's thread exits.
    public let eventBase: OpaquePointer

    // The wake mechanism: an eventfd watched by the base like any descriptor (libevent's own
    // core wakes through a descriptor too). `event_active` on a base made thread-safe with
    // `evthread_use_pthreads()` measured a tie in latency and ~0.6 µs more per wake (see
    // "Design measurements" in the benchmark docs). The deciding reason is lifetime: the loop
    // keeps its waker after its thread exits and frees the backend, so a `wake()` racing with
    // that must never touch the freed `event_base`; an eventfd that the waker owns outlives the
    // base safely, `event_active` would reach into it. So the base is created with
    // `EVENT_BASE_FLAG_NOLOCK` and RunLoopKit never calls the process-wide
    // `evthread_use_pthreads()`.
    private let eventWaker: EventfdWaker
    /// Watches the waker's eventfd.
    private let wakerEvent: OpaquePointer
    /// A one-shot timer that bounds a wait: its firing ends `EVLOOP_ONCE`.
    private let timeoutEvent: OpaquePointer
    /// Core's registrations, by descriptor: each event and its callback's context.
    private var registrations: [Int32: (event: OpaquePointer, context: EventContext)] = [:]
    /// Where descriptor callbacks put their events during a wait.
    private let collector: ReadyCollector

    /// Creates an `event_base` on epoll with precise timers, and its waker.
    ///
    /// - Throws: `BackendError.unavailable` when libevent cannot create the base (or
    ///   it would not run on epoll), the eventfd or the backend's own events.
    public init() throws {
        do {
            eventWaker = try EventfdWaker()
        } catch {
            throw BackendError.unavailable(.libevent, .other(error))
        }
        collector = ReadyCollector(waker: eventWaker)
        let base = try Self.makeBase()
        let wakerEvent = event_new(
            base, eventWaker.descriptor, Int16(EV_READ | EV_PERSIST), consumeWake,
            Unmanaged.passUnretained(collector).toOpaque())
        // A pure timer (no descriptor, not persistent); its callback has nothing to do.
        let timeoutEvent = event_new(base, -1, 0, { _, _, _ in }, nil)
        guard let wakerEvent, let timeoutEvent, event_add(wakerEvent, nil) == 0 else {
            let error = SystemError(
                wakerEvent == nil || timeoutEvent == nil ? "event_new" : "event_add", errno: Self.errnoOrDefault(ENOMEM)
            )
            wakerEvent.map(event_free)
            timeoutEvent.map(event_free)
            event_base_free(base)
            throw BackendError.unavailable(.libevent, .other(error))
        }
        eventBase = base
        self.wakerEvent = wakerEvent
        self.timeoutEvent = timeoutEvent
    }

    deinit {
        // Events first (event_free also deletes them), then the base they point into. The
        // waker's eventfd is closed when the waker goes: the loop keeps it after this.
        for registration in registrations.values { event_free(registration.event) }
        event_free(wakerEvent)
        event_free(timeoutEvent)
        event_base_free(eventBase)
    }

    /// Adds a persistent, level-triggered event for `descriptor` to the base.
    ///
    /// - Throws: `SystemError` (named `event_add` or `event_new`): `EBADF` when negative or
    ///   closed, `EEXIST` when already registered, `EPERM` for a regular file or directory.
    public func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        // What epoll_ctl answers in the other backends; libevent itself would accept both.
        guard descriptor >= 0 else { throw SystemError("event_add", errno: EBADF) }
        guard registrations[descriptor] == nil else { throw SystemError("event_add", errno: EEXIST) }
        let context = EventContext(token: token, descriptor: descriptor, collector: collector)
        guard
            let event = event_new(
                eventBase, descriptor, Self.events(for: interest),
                collectReadiness, Unmanaged.passUnretained(context).toOpaque())
        else {
            throw SystemError("event_new", errno: Self.errnoOrDefault(ENOMEM))
        }
        guard event_add(event, nil) == 0 else {
            // libevent keeps epoll_ctl's errno (EBADF for a closed descriptor, EPERM for a file).
            let code = Self.errnoOrDefault(EINVAL)
            event_free(event)
            throw SystemError("event_add", errno: code)
        }
        registrations[descriptor] = (event, context)
    }

    /// Deletes and frees `descriptor`'s event; a descriptor already closed (or not registered)
    /// is no error. No later wait reports it.
    public func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        guard let registration = registrations.removeValue(forKey: descriptor) else { return }
        // event_free deletes the event first. libevent's epoll backend ignores EBADF/ENOENT/
        // EPERM from EPOLL_CTL_DEL, so a descriptor the user already closed is no error.
        event_free(registration.event)
    }

    /// Runs one `event_base_loop(EVLOOP_ONCE)`, bounded by a one-shot timer with the timeout
    /// rounded up to the microsecond (`EVLOOP_NONBLOCK` for a zero timeout), and reports the
    /// descriptors whose callbacks ran. Callbacks of your own events on the base run here too.
    ///
    /// - Throws: `SystemError` when `event_base_loop` or arming the timer fails.
    public func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        events.removeAll(keepingCapacity: true)
        // Callbacks append straight into the caller's buffer: no copy, no allocation.
        swap(&events, &collector.events)
        defer { swap(&events, &collector.events) }

        var flags = Int32(EVLOOP_ONCE)
        if let timeout {
            if timeout <= .zero {
                flags |= Int32(EVLOOP_NONBLOCK)
            } else {
                var interval = timeout.timevalRoundedUp
                guard event_add(timeoutEvent, &interval) == 0 else {
                    throw SystemError("event_add", errno: Self.errnoOrDefault(EINVAL))
                }
            }
        }
        // EVLOOP_ONCE returns only after a loop iteration ran at least one callback and left
        // none active, so every event that became active in that iteration was collected.
        let result = event_base_loop(eventBase, flags)
        let code = currentErrno()
        event_del(timeoutEvent)
        collector.completeHangUpsAndErrors()
        guard result >= 0 else { throw SystemError("event_base_loop", errno: code == 0 ? EINVAL : code) }
    }

    // MARK: - Helpers

    /// How many descriptors an epoll `event_base` opens: the epoll instance, a timerfd for
    /// precise timers, and the two ends of the pipe of its signal handling.
    private static let baseDescriptorCount = 4

    /// Throws the typed error when the process could not open the descriptors a base needs.
    ///
    /// libevent 2.1 gives up on the whole process (`exit(1)`) when it cannot open the pipe for
    /// its signal handling while making a base, and would make a base without its precise
    /// timer when the timerfd is refused. So the descriptors are opened here first and closed
    /// just before the base is made: running out of descriptors becomes an error the caller
    /// can handle. (Another thread opening descriptors in between can still take them; that
    /// window is as small as it can be made from outside libevent.)
    private static func reserveBaseDescriptors() throws {
        var reserved: [EventCounter] = []
        defer { for counter in reserved { counter.close() } }
        for _ in 0..<baseDescriptorCount {
            do {
                reserved.append(try EventCounter())
            } catch {
                throw BackendError.unavailable(
                    .libevent, .other(SystemError("event_base_new_with_config", errno: error.errno)))
            }
        }
    }

    /// The `event_base` configuration, and why.
    ///
    /// - `EVENT_BASE_FLAG_PRECISE_TIMER`: otherwise libevent reads `CLOCK_MONOTONIC_COARSE` and
    ///   waits in whole milliseconds; with it, epoll waits on a timerfd (microseconds).
    /// - `EVENT_BASE_FLAG_NOLOCK`: the base is used on one thread; the waker needs no lock (see
    ///   the eventfd waker), and even if the process called `evthread_use_pthreads()` the base
    ///   gets no mutex and no internal notification eventfd.
    /// - `EVENT_BASE_FLAG_IGNORE_ENV`: `EVENT_NOEPOLL`, `EVENT_EPOLL_USE_CHANGELIST` and friends
    ///   in the environment must not change the loop's behaviour.
    /// - No `EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST`: the changelist defers `epoll_ctl` to the next
    ///   dispatch, so a bad descriptor would fail the wait instead of `register`, and a deferred
    ///   delete could land on a descriptor number closed and reused meanwhile.
    /// - Only epoll (select and poll avoided, `EV_FEATURE_O1 | EV_FEATURE_EARLY_CLOSE` required,
    ///   then checked by name): O(1) changes and `EV_CLOSED` (EPOLLRDHUP) for hang-ups.
    ///
    /// libevent's epoll backend still makes a signal pipe per base (`evsig_init_`); it stays
    /// idle unless someone adds an `EV_SIGNAL` event, and is closed with the base.
    private static func makeBase() throws -> OpaquePointer {
        guard let config = event_config_new() else {
            throw BackendError.unavailable(
                .libevent, .other(SystemError("event_config_new", errno: errnoOrDefault(ENOMEM))))
        }
        // The base copies what it needs: the configuration is freed as soon as it is made.
        defer { event_config_free(config) }
        let flags =
            EVENT_BASE_FLAG_PRECISE_TIMER.rawValue | EVENT_BASE_FLAG_NOLOCK.rawValue
            | EVENT_BASE_FLAG_IGNORE_ENV.rawValue
        _ = event_config_set_flag(config, Int32(bitPattern: flags))
        _ = event_config_avoid_method(config, "select")
        _ = event_config_avoid_method(config, "poll")
        _ = event_config_require_features(
            config, Int32(bitPattern: EV_FEATURE_O1.rawValue | EV_FEATURE_EARLY_CLOSE.rawValue))
        try reserveBaseDescriptors()
        guard let base = event_base_new_with_config(config) else {
            throw BackendError.unavailable(
                .libevent, .other(SystemError("event_base_new_with_config", errno: errnoOrDefault(ENOSYS))))
        }
        guard let method = event_base_get_method(base), String(cString: method) == "epoll" else {
            event_base_free(base)
            throw BackendError.unavailable(.libevent, .other(SystemError("event_base_get_method", errno: ENOSYS)))
        }
        return base
    }

    private static func events(for interest: Interest) -> Int16 {
        var what = Int16(EV_PERSIST)
        // EV_CLOSED asks for EPOLLRDHUP, as the epoll backend does for readable interest.
        if interest.contains(.readable) { what |= Int16(EV_READ | EV_CLOSED) }
        if interest.contains(.writable) { what |= Int16(EV_WRITE) }
        return what
    }

    private static func errnoOrDefault(_ fallback: Int32) -> Int32 {
        let code = currentErrno()
        return code == 0 ? fallback : code
    }
}

/// The descriptor events' libevent callback: records the registration's token and readiness.
private let collectReadiness: event_callback_fn = { _, what, context in
    let context = Unmanaged<EventContext>.fromOpaque(context!).takeUnretainedValue()
    context.collector.append(context, what: what)
}

/// The waker event's libevent callback.
private let consumeWake: event_callback_fn = { _, _, context in
    Unmanaged<ReadyCollector>.fromOpaque(context!).takeUnretainedValue().consumeWake()
}
#endif
