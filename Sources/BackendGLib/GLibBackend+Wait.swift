#if GLib
internal import CGLib
import Glibc
import RunLoopCore

extension GLibBackend {
    /// How long a wait lasts at most while another thread owns the context: it cannot see
    /// GLib's wake-up descriptor then, so it looks again this often.
    private static let foreignOwnerRecheck: Duration = .milliseconds(1)

    /// Waits in `ppoll` over Core's descriptors and the context's, for Core's timeout (rounded up
    /// to the nanosecond) or GLib's (whole milliseconds), whichever is sooner; reports Core's
    /// ready descriptors and runs `g_main_context_check` so that ``dispatchOwnSources()`` can run
    /// what is ready. No GLib callback runs here. A signal ends the wait early with nothing
    /// reported.
    ///
    /// - Throws: `SystemError` when `ppoll` fails other than by `EINTR`.
    public func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        events.removeAll(keepingCapacity: true)
        dispatchPending = false
        glibWoke = false
        if registrationsChanged { writeCoreDescriptors() }
        let coreCount = registrations.count
        // The pass the nested-iteration source dispatches from a GLib iteration of another
        // loop's: Core's descriptors only, GLib's sources are that loop's.
        if let base = foreignDispatchBase, runAcquisitions.count <= base + 1 {
            try waitForCoreDescriptors(count: coreCount, timeout: timeout, into: &events)
            return
        }

        let owned = g_main_context_acquire(context) != 0
        // A run that began while another thread owned the context takes it for the rest of the
        // run once it is free, as `g_main_loop_run` does once it gets it.
        if owned, let innermost = runAcquisitions.indices.last, !runAcquisitions[innermost] {
            runAcquisitions[innermost] = g_main_context_acquire(context) != 0
        }
        var priority: Int32 = 0
        var glibCount = 0
        var glibTimeout: Duration? = owned ? nil : Self.foreignOwnerRecheck
        if owned {
            // The nested-iteration source stays inert in this wait's prepare and check.
            isInOwnWait = true
            let ready = g_main_context_prepare(context, &priority) != 0
            var milliseconds: Int32 = -1
            glibCount = queryContext(priority: priority, after: coreCount, timeout: &milliseconds)
            // A source ready in prepare (an idle callback) means: do not sleep.
            glibTimeout = ready ? .zero : milliseconds >= 0 ? .milliseconds(milliseconds) : nil
        }

        // The sooner of the two (no array: a pass allocates nothing). Core's is waited to the
        // nanosecond, rounded up, so RunLoopKit's timers are never early nor a millisecond late
        // (the contract's T8); GLib's own are whole milliseconds, as GLib computes them.
        var wait = timeout
        if let glibTimeout, wait.map({ glibTimeout < $0 }) ?? true { wait = glibTimeout }
        // A pending wake: poll, do not sleep.
        if glibWaker.isPending { wait = .zero }
        let total = coreCount + glibCount
        // Writes of the waker made before the poll landed before it: the poll sees them, and
        // check drains them.
        let writesBeforePoll = glibWaker.writesMade
        let count = pollSet.withUnsafeMutableBufferPointer { buffer in
            if var spec = wait.map({ max(.zero, $0) })?.timespecRoundedUp {
                return rlk_ppoll(buffer.baseAddress!, UInt(total), &spec)
            }
            return rlk_ppoll(buffer.baseAddress!, UInt(total), nil)
        }
        let code = currentErrno()
        if count < 0 {
            // Nothing was polled: GLib must see no readiness (EINTR), and then check all the same,
            // since it was prepared; its timeouts may have come due.
            for index in 0..<total { pollSet[index].revents = 0 }
        } else if count > 0 {
            collectCoreEvents(count: coreCount, into: &events)
        }
        var glibReady = false
        if count > 0 {
            for index in coreCount..<total where pollSet[index].revents != 0 {
                glibReady = true
                break
            }
        }
        if owned {
            dispatchPending =
                pollSet.withUnsafeMutableBufferPointer { buffer in
                    g_main_context_check(context, priority, buffer.baseAddress! + coreCount, Int32(glibCount))
                } != 0
            isInOwnWait = false
            g_main_context_release(context)
        }
        let woken = glibWaker.consume()
        // A GLib descriptor ready ends the loop's sleep even when no source is: GLib's own wake-up
        // (`g_main_context_wakeup` from GLib code) asks the context's loop for an iteration,
        // which here is a pass. Unless the readiness may be this waker's own: a wake consumed
        // now, one under way, or one whose write was made since the last wait polled GLib's
        // wake-up (made after the last wait's poll, it may have landed too late for it, after the
        // wake was consumed: Core then waits again, as on every backend). A GLib wake-up that coincides with one of ours is merged with it;
        // a source it was for is found ready by check all the same.
        // Nor when the nested-iteration source's change of polls wrote it (a GLib source that is
        // ready all the same is found by check).
        glibWoke =
            glibReady && !woken && !glibWaker.hasWakeUnderWay && glibWaker.writesMade == writesBeforeLastPoll
            && !nestedSourceChangedPolls
        nestedSourceChangedPolls = false
        writesBeforeLastPoll = writesBeforePoll
        // Interrupted by a signal: return with nothing, so Core waits again for what is left.
        if count < 0, code != EINTR { throw SystemError("ppoll", errno: code) }
    }

    /// `ppoll` over Core's `count` descriptors alone (the front of `pollSet`), for `timeout`;
    /// reports the ready ones and consumes a pending wake of the ``waker``.
    private func waitForCoreDescriptors(
        count: Int, timeout: Duration?, into events: inout [ReadyEvent]
    ) throws(SystemError) {
        let polled = pollSet.withUnsafeMutableBufferPointer { buffer in
            if var spec = timeout.map({ max(.zero, $0) })?.timespecRoundedUp {
                return rlk_ppoll(buffer.baseAddress!, UInt(count), &spec)
            }
            return rlk_ppoll(buffer.baseAddress!, UInt(count), nil)
        }
        let code = currentErrno()
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
