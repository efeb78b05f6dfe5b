#if GLib
internal import CGLib
import Glibc
import RunLoopCore

extension GLibBackend {
    /// How long a wait lasts at most while another thread owns the context: it cannot see
    /// GLib's wake-up descriptor then, so it looks again this often.
    private static let foreignOwnerRecheck: Duration = .milliseconds(1)

    /// What a wait's `g_main_context_prepare` and `g_main_context_query` gave (a value: a wait
    /// allocates nothing).
    private struct PreparedContext {
        /// The wait acquired the context, prepared and queried it: it checks and releases it.
        /// False while another thread owns it: GLib's sources are that thread's to serve.
        var owned: Bool
        /// The priority `g_main_context_prepare` returned, which query and check are given.
        var priority: Int32 = 0
        /// How many of GLib's descriptors sit in `pollSet` after Core's.
        var count = 0
        /// GLib's timeout: zero when a source was ready in prepare (an idle callback), nil when
        /// GLib has none; while another thread owns the context, the recheck interval.
        var timeout: Duration?
    }

    /// Waits in `ppoll` over Core's descriptors and the context's, for Core's timeout (rounded up
    /// to the nanosecond) or GLib's (whole milliseconds), whichever is sooner; reports Core's
    /// ready descriptors and runs `g_main_context_check` so that ``dispatchOwnSources()`` can run
    /// what is ready. No GLib callback runs here. A signal ends the wait early with nothing
    /// reported.
    ///
    /// One GLib iteration split as GLib allows, each step a method of its own below: begin
    /// (forget the last wait), prepare (acquire, prepare and query the context), poll (both
    /// sets, the sooner timeout), collect (Core's events, whether GLib's descriptors woke),
    /// check (GLib's verdict, then release), and tell GLib's wake from the waker's.
    ///
    /// - Throws: `SystemError` when `ppoll` fails other than by `EINTR`.
    public func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        let coreCount = beginWait(into: &events)
        // The pass the nested-iteration source dispatches from a GLib iteration of another
        // loop's: Core's descriptors only, GLib's sources are that loop's.
        if let base = foreignDispatchBase, runAcquisitions.count <= base + 1 {
            try waitForCoreDescriptors(count: coreCount, timeout: timeout, into: &events)
            return
        }
        let prepared = prepareContext(after: coreCount)
        let total = coreCount + prepared.count
        let limit = sleepTimeout(core: timeout, glib: prepared.timeout)
        // Writes of the waker made before the poll landed before it: the poll sees them, and
        // check drains them.
        let writesBeforePoll = glibWaker.writesMade
        let (polled, code) = poll(count: total, timeout: limit)
        let glibReady = collectReadiness(polled: polled, coreCount: coreCount, total: total, into: &events)
        if prepared.owned { checkContext(prepared, after: coreCount) }
        noteGLibWake(glibReady: glibReady, writesBeforePoll: writesBeforePoll)
        // Interrupted by a signal: return with nothing, so Core waits again for what is left.
        if polled < 0, code != EINTR { throw SystemError("ppoll", errno: code) }
    }

    /// Forgets what the last wait found, and rewrites Core's part of `pollSet` if registrations
    /// changed since (only then: a pass that changed nothing writes nothing); returns how many
    /// of Core's descriptors sit at its front.
    private func beginWait(into events: inout [ReadyEvent]) -> Int {
        events.removeAll(keepingCapacity: true)
        dispatchPending = false
        glibWoke = false
        if registrationsChanged { writeCoreDescriptors() }
        return registrations.count
    }

    /// Acquires the context and runs `g_main_context_prepare` and `g_main_context_query`, which
    /// writes GLib's descriptors into `pollSet` after Core's `coreCount`. While another thread
    /// owns the context, GLib's sources are that thread's: the wait polls Core's descriptors
    /// alone then, and looks again after ``foreignOwnerRecheck`` (it cannot see GLib's wake-up).
    private func prepareContext(after coreCount: Int) -> PreparedContext {
        guard acquireForWait() else { return PreparedContext(owned: false, timeout: Self.foreignOwnerRecheck) }
        // The nested-iteration source stays inert in this wait's prepare and check.
        isInOwnWait = true
        var prepared = PreparedContext(owned: true)
        let ready = g_main_context_prepare(context, &prepared.priority) != 0
        var milliseconds: Int32 = -1
        prepared.count = queryContext(priority: prepared.priority, after: coreCount, timeout: &milliseconds)
        // A source ready in prepare (an idle callback) means: do not sleep.
        prepared.timeout = ready ? .zero : milliseconds >= 0 ? .milliseconds(milliseconds) : nil
        return prepared
    }

    /// `g_main_context_acquire` for this wait (``checkContext(_:after:)`` releases it); false
    /// when another thread owns the context. A run that began while another thread owned the
    /// context takes it for the rest of the run once it is free, as `g_main_loop_run` does once
    /// it gets it.
    private func acquireForWait() -> Bool {
        guard g_main_context_acquire(context) != 0 else { return false }
        if let innermost = runAcquisitions.indices.last, !runAcquisitions[innermost] {
            runAcquisitions[innermost] = g_main_context_acquire(context) != 0
        }
        return true
    }

    /// The sooner of Core's timeout and GLib's (no array: a pass allocates nothing). Core's is
    /// waited to the nanosecond, rounded up, so RunLoopKit's timers are never early nor a
    /// millisecond late (the contract's T8); GLib's own are whole milliseconds, as GLib computes
    /// them. A pending wake of the waker: poll, do not sleep.
    private func sleepTimeout(core: Duration?, glib: Duration?) -> Duration? {
        var wait = core
        if let glib, wait.map({ glib < $0 }) ?? true { wait = glib }
        if glibWaker.isPending { wait = .zero }
        return wait
    }

    /// `ppoll` over the first `count` entries of `pollSet` for `timeout` (nil: until an event),
    /// rounded up to the nanosecond; its result and the `errno` it left.
    private func poll(count: Int, timeout: Duration?) -> (result: Int32, errno: Int32) {
        let result = pollSet.withUnsafeMutableBufferPointer { buffer in
            if var spec = timeout.map({ max(.zero, $0) })?.timespecRoundedUp {
                return rlk_ppoll(buffer.baseAddress!, UInt(count), &spec)
            }
            return rlk_ppoll(buffer.baseAddress!, UInt(count), nil)
        }
        return (result, currentErrno())
    }

    /// Reports Core's ready descriptors; returns whether one of GLib's was ready. When nothing
    /// was polled (`EINTR`), GLib must see no readiness, and check all the same, since it was
    /// prepared: its timeouts may have come due.
    private func collectReadiness(
        polled: Int32, coreCount: Int, total: Int, into events: inout [ReadyEvent]
    ) -> Bool {
        guard polled >= 0 else {
            for index in 0..<total { pollSet[index].revents = 0 }
            return false
        }
        guard polled > 0 else { return false }
        collectCoreEvents(count: coreCount, into: &events)
        for index in coreCount..<total where pollSet[index].revents != 0 { return true }
        return false
    }

    /// `g_main_context_check` over GLib's part of `pollSet`: whether sources are ready, for
    /// ``dispatchOwnSources()`` (their callbacks never run in the wait, where Core holds the
    /// backend lock). It also drains GLib's wake-up descriptor when the poll found it readable,
    /// before ``noteGLibWake(glibReady:writesBeforePoll:)`` consumes the waker's wake (that order
    /// loses no wake: see `GLibWaker.consume()`). Then releases the context.
    private func checkContext(_ prepared: PreparedContext, after coreCount: Int) {
        dispatchPending =
            pollSet.withUnsafeMutableBufferPointer { buffer in
                g_main_context_check(context, prepared.priority, buffer.baseAddress! + coreCount, Int32(prepared.count))
            } != 0
        isInOwnWait = false
        g_main_context_release(context)
    }

    /// Consumes the waker's wake, and decides whether the wait ended for GLib's sake
    /// (``hasOwnSourcesReady``).
    ///
    /// A GLib descriptor ready ends the loop's sleep even when no source is: GLib's own wake-up
    /// (`g_main_context_wakeup` from GLib code) asks the context's loop for an iteration, which
    /// here is a pass. Unless the readiness may be this waker's own: a wake consumed now, one
    /// under way, or one whose write was made since the last wait polled GLib's wake-up (made
    /// after the last wait's poll, it may have landed too late for it, after the wake was
    /// consumed: Core then waits again, as on every backend). A GLib wake-up that coincides with
    /// one of ours is merged with it; a source it was for is found ready by check all the same.
    /// Nor when the nested-iteration source's change of polls wrote it (a GLib source that is
    /// ready all the same is found by check).
    private func noteGLibWake(glibReady: Bool, writesBeforePoll: Int) {
        let woken = glibWaker.consume()
        glibWoke =
            glibReady && !woken && !glibWaker.hasWakeUnderWay && glibWaker.writesMade == writesBeforeLastPoll
            && !nestedSourceChangedPolls
        nestedSourceChangedPolls = false
        writesBeforeLastPoll = writesBeforePoll
    }

    /// `ppoll` over Core's `count` descriptors alone (the front of `pollSet`), for `timeout`;
    /// reports the ready ones and consumes a pending wake of the ``waker``.
    private func waitForCoreDescriptors(
        count: Int, timeout: Duration?, into events: inout [ReadyEvent]
    ) throws(SystemError) {
        let (polled, code) = poll(count: count, timeout: timeout)
        if polled > 0 { collectCoreEvents(count: count, into: &events) }
        _ = glibWaker.consume()
        if polled < 0, code != EINTR { throw SystemError("ppoll", errno: code) }
    }

    /// `g_main_context_query` into `pollSet` after Core's `coreCount` descriptors, growing it
    /// until GLib's all fit; returns how many GLib gave.
    private func queryContext(priority: Int32, after coreCount: Int, timeout: inout Int32) -> Int {
        while true {
            let room = pollSet.count - coreCount
            let needed = pollSet.withUnsafeMutableBufferPointer { buffer in
                Int(g_main_context_query(context, priority, &timeout, buffer.baseAddress! + coreCount, Int32(room)))
            }
            if needed <= room { return needed }
            pollSet.append(contentsOf: repeatElement(GPollFD(), count: needed - room + 16))
        }
    }

    /// Writes Core's descriptors at the front of `pollSet` (after registrations changed).
    private func writeCoreDescriptors() {
        if pollSet.count < registrations.count + 16 {
            pollSet.append(contentsOf: repeatElement(GPollFD(), count: registrations.count + 16 - pollSet.count))
        }
        for (index, registration) in registrations.enumerated() {
            pollSet[index].fd = registration.failed ? -1 : registration.descriptor
            pollSet[index].events = UInt16(bitPattern: registration.pollEvents)
        }
        registrationsChanged = false
    }

    /// Reports the ready ones of Core's descriptors (the front of `pollSet`).
    private func collectCoreEvents(count: Int, into events: inout [ReadyEvent]) {
        for index in 0..<count {
            let revents = Int16(bitPattern: pollSet[index].revents)
            guard revents != 0, !registrations[index].failed else { continue }
            if revents & Int16(POLLNVAL) != 0 {
                // Closed behind Core's back: polling the number again would report it forever.
                fail(index, into: &events)
                continue
            }
            // Level-triggered (D2): every wait polls every descriptor afresh; hang-ups and errors
            // are reported whatever the interest (D3).
            let readiness = registrations[index].readiness(of: revents)
            guard !readiness.isEmpty else { continue }
            // ppoll watches numbers (D8): one closed behind Core's back and reused names a stranger,
            // which must never be reported under this token. Reported once as an error, which
            // Core recognises as that misuse; never polled again.
            guard registrations[index].namesRegisteredFile else {
                fail(index, into: &events)
                continue
            }
            events.append(ReadyEvent(token: registrations[index].token, readiness: readiness))
        }
    }

    private func fail(_ index: Int, into events: inout [ReadyEvent]) {
        registrations[index].failed = true
        registrationsChanged = true
        events.append(ReadyEvent(token: registrations[index].token, readiness: .error))
    }
}
#endif
