/// Driving a loop from another event loop (a host: GLib's, libuv's, a `poll(2)` loop), in GLib's
/// prepare / check / dispatch shape. The host waits, not the loop: ``Loop/prepareForHost(in:)``
/// publishes that the loop sleeps, exactly as the loop's own wait does (contract rule W2: a
/// post from another thread then wakes it, here by making ``Loop/hostDescriptor()`` readable),
/// and ``Loop/dispatchForHost()`` ends that sleep and runs one pass that never sleeps.
extension Loop {
    /// Why a loop cannot be driven by a host loop.
    public enum EmbeddingError: Error, Hashable, CustomStringConvertible {
        /// The loop's backend offers no descriptor a host could wait on; `reason` says why.
        case unsupported(BackendKind, reason: String)
        /// The loop's thread has exited: its backend, and the descriptor, are gone.
        case loopEnded

        /// The error in words.
        public var description: String {
            switch self {
            case let .unsupported(kind, reason): "the \(kind) backend cannot be driven by a host loop: \(reason)"
            case .loopEnded: "the loop has ended (its thread exited): there is no descriptor to wait on"
            }
        }
    }

    /// What a host loop waits for after ``Loop/prepareForHost(in:)``: the loop's descriptor, and
    /// at most until ``deadline``.
    public struct HostWait: Sendable, Hashable {
        /// When the host must dispatch the loop even if its descriptor stays quiet: the latest
        /// instant that still serves the loop's next timers within their tolerance (a timer's
        /// instant for a timer without tolerance); `nil` when only the descriptor can bring
        /// work. A dispatch before it is never wrong, only an extra pass.
        public let deadline: ContinuousClock.Instant?
        /// The loop has work now: the host must not sleep, and dispatches at once.
        public let isReady: Bool
        /// How much earlier than ``deadline`` the host may dispatch and still serve the timer
        /// that sets it (its tolerance): room for a millisecond host's rounding.
        let window: Duration

        /// Creates a wait (``Loop/prepareForHost(in:)`` does).
        init(deadline: ContinuousClock.Instant?, window: Duration = .zero, isReady: Bool) {
            self.deadline = deadline
            self.window = window
            self.isReady = isReady
        }

        /// How long the host may sleep from `now`, to the nanosecond: `nil` without limit,
        /// `.zero` when the loop is ready or its deadline has passed.
        public func timeout(from now: ContinuousClock.Instant = .now) -> Duration? {
            if isReady { return .zero }
            return deadline.map { max(.zero, $0 - now) }
        }

        /// ``timeout(from:)`` in whole milliseconds for `poll(2)`-style hosts that can wait for
        /// nothing finer (a host that polls descriptors keeps the kernel's precision with a timer
        /// descriptor armed at ``deadline`` instead, as `RunLoopKitGLib` does): rounded **up**, so the host never dispatches before a timer is due
        /// (contract T8); `-1` without limit; at most `Int32.max`. A timer with at least a
        /// millisecond of tolerance is served within it; one without may be served up to a
        /// millisecond late, the host's resolution (the loop's own wait has nanoseconds).
        public func timeoutMilliseconds(from now: ContinuousClock.Instant = .now) -> Int32 {
            guard var timeout = timeout(from: now) else { return -1 }
            // Rounding up overshoots by less than a millisecond: take it out of the timer's
            // tolerance when it has some, so that the rounded wait still ends within it.
            if timeout > .zero { timeout = max(.zero, timeout - min(window, .nanoseconds(999_999))) }
            // The one rounding rule for timeouts (Duration+Timeouts.swift): up, saturating.
            return timeout.millisecondsRoundedUp
        }
    }

    /// The descriptor a host loop polls for readability on this loop's behalf: it becomes
    /// readable when the loop has work (a descriptor source ready, a wake from another thread's
    /// `perform`, `signal` or `wakeUp`, the dispatch main queue on the main loop). Poll it, never
    /// read, write nor close it. It belongs to the loop's backend and stays valid until the
    /// loop's thread exits. Safe from any thread.
    ///
    /// - Throws: ``EmbeddingError/unsupported(_:reason:)`` on a backend that offers none (the
    ///   libevent backend: an `event_base` has no descriptor of its own that reports
    ///   readiness), with the backend's reason; ``EmbeddingError/loopEnded`` after the loop's
    ///   thread exited. The epoll backend offers its epoll descriptor, the io_uring backend its
    ///   ring's.
    public func hostDescriptor() throws(EmbeddingError) -> Int32 {
        guard !state.withLock({ $0.isTornDown }) else { throw .loopEnded }
        switch hostDescriptorOffer {
        case let .descriptor(fd): return fd
        case let .unsupported(reason): throw .unsupported(backend, reason: reason)
        }
    }

    /// Gets the loop ready for a host's wait in `mode`: registers the mode's descriptors, and,
    /// unless it has work already, publishes that it sleeps, so that work posted from another
    /// thread from now on makes ``hostDescriptor()`` readable. On the loop's own thread.
    ///
    /// The host then waits on the descriptor until the returned wait's deadline (or not at all
    /// when it ``HostWait/isReady``), and calls ``dispatchForHost()``, whether the descriptor
    /// became readable or the deadline passed. Preparing again without dispatching (GLib does,
    /// when a check finds nothing) is allowed: it ends the earlier wait first, and nothing
    /// posted meanwhile is lost (its wake stays on the descriptor).
    ///
    /// From the prepare until the dispatch's pass is over, the loop counts as running for
    /// other threads: ``wakeUp()`` makes the descriptor readable (W2), ``stop()`` too, and the
    /// dispatch then returns ``RunResult/stopped`` (W1); a timer added that is due before the
    /// wait's deadline, a source, a signal or a block posted to the mode wake it as they wake a
    /// sleeping run (W3, C2). Between a dispatch and the next prepare, `wakeUp()` and `stop()`
    /// have no effect, as between runs; posted work waits in the loop's queues, where the next
    /// prepare finds it.
    ///
    /// - Parameter mode: the mode the host serves the loop in; not ``Mode/common`` (traps with a
    ///   message, as a mode to run).
    /// - Returns: the wait: until when the host may sleep.
    public func prepareForHost(in mode: Mode = .default) -> HostWait {
        trap(
            unless: isOnOwnThread,
            "Loop.prepareForHost(in:) called on a thread that is not \(self)'s own; a host drives a loop on the loop's own thread"
        )
        trap(unless: mode != .common, "Loop.prepareForHost(in:): .common is a set of modes, not a mode to serve")
        endHostWait()
        bindMainQueueIfMain()
        syncDescriptors(for: mode)
        registrar.withBackend { backend in
            if case let .passPhase(phase) = backend.ownSources { phase.hostWillWait() }
            guard case let .descriptor(_, prepare?) = backend.embedding else { return }
            do {
                try prepare()
            } catch {
                trap("RunLoopKit: \(backend.kind) could not prepare for a host's wait: \(error)")
            }
        }
        // [H1] The host's wait is a run of the loop's: recorded first, so that from here
        // `wakeUp()` and `stop()` act on it (W1, W2); a prepare again without a dispatch keeps
        // the record, and a stop made for it.
        let recorded: Bool = state.withLock { state in
            guard !state.isTornDown else { return false }
            if let last = state.runs.indices.last, state.runs[last].kind == .hostWait {
                state.runs[last].mode = mode
            } else {
                state.runs.append(RunRecord(mode: mode, kind: .hostWait))
            }
            return true
        }
        guard recorded else { return HostWait(deadline: nil, isReady: true) }
        let plan = decideSleep(in: mode, until: nil, for: .host)
        let wait = HostWait(
            // On the real clock the loop's nanoseconds may lag the instant by tens of
            // nanoseconds (LoopClock.continuous): a host that dispatches within that lag after the
            // deadline finds the timer not yet due, and its next prepare says the loop is ready
            // (a deadline within the lag counts as reached): one more pass, no wait.
            deadline: plan.deadline.map(QueueTime.instant), window: .nanoseconds(plan.tolerance),
            isReady: !plan.sleeps)
        local.hostWait = (mode, wait.isReady ? nil : instruments.countedNow())
        return wait
    }

    /// Ends the host's wait prepared by ``prepareForHost(in:)`` and runs one pass in its mode
    /// that never sleeps: the blocks, signalled sources, due timers and ready descriptors of
    /// that mode run, and the backend consumes the wake that made its descriptor readable (so
    /// an idle host does not spin). On the loop's own thread.
    ///
    /// - Returns: how the pass ended: ``RunResult/timedOut`` after a pass;
    ///   ``RunResult/stopped`` when ``stop()`` was called since the prepare (from any thread,
    ///   or by a callout of this pass: the host's cue to stop driving the loop; the pass still
    ///   ran); ``RunResult/finished`` when the mode had nothing to serve (the backend's wake is
    ///   consumed all the same).
    @discardableResult
    public func dispatchForHost() -> RunResult {
        trap(
            unless: isOnOwnThread,
            "Loop.dispatchForHost() called on a thread that is not \(self)'s own; a host drives a loop on the loop's own thread"
        )
        guard let (mode, _) = local.hostWait else {
            trap("Loop.dispatchForHost() called without Loop.prepareForHost(in:) before it on \(self)")
        }
        endHostWait()
        let (result, passStopped) = run(mode, timeout: .zero, returnAfterSourceHandled: false, drainsBackend: true)
        // A run that did not start (its mode empty, the loop torn down) made no wait: consume
        // the wake that brought the host here, or its descriptor stays readable.
        if result == .finished { drainBackendForHost() }
        // [H2] Taken after the pass: a stop() posted at any moment since the prepare is this
        // dispatch's (one during the pass stopped the pass's own run, over the host's).
        let hostStopped = endHostRun()
        return passStopped || hostStopped ? .stopped : result
    }

    /// Ends the host's wait prepared by ``prepareForHost(in:)`` without running a pass: for a
    /// host that stops serving the loop between its prepare and its dispatch (a GLib source
    /// destroyed after a check that found nothing). Without it the loop would stay published
    /// as asleep in the host's mode (``currentMode`` would name it, and other threads' posts
    /// would keep making the descriptor readable for a host that no longer looks). Does
    /// nothing when no wait is prepared. On the loop's own thread.
    public func cancelHostWait() {
        trap(
            unless: isOnOwnThread,
            "Loop.cancelHostWait() called on a thread that is not \(self)'s own; a host drives a loop on the loop's own thread"
        )
        endHostWait()
        // No host waits any more: `wakeUp()` and `stop()` have no effect again, as between runs.
        _ = endHostRun()
    }

    /// Removes the host's run record, if it is the innermost; returns whether it was stopped.
    ///
    /// A host driven from a callout of a run (a GLib loop nested in it) took the place of that
    /// run as the innermost: a stop made for the host's wait is also that run's, as it was
    /// before the host came, so it is kept there even when the host ends without a dispatch.
    private func endHostRun() -> Bool {
        state.withLock { state in
            guard let last = state.runs.last, last.kind == .hostWait else { return false }
            let stopped = state.runs.removeLast().stopped
            if stopped, let enclosing = state.runs.indices.last {
                state.runs[enclosing].stopped = true
                hints.noteStopRequested()
            }
            return stopped
        }
    }

    /// A run starting while a host waits for this loop (a host callback ran the loop nested,
    /// between the host's prepare and its dispatch): the run's own waits take over, so the
    /// host's sleep ends here; ``currentMode`` and the time asleep are the run's. The prepared
    /// wait stays, for the host's dispatch. Returns whether one was suspended.
    func suspendHostWaitForRun() -> Bool {
        guard let (mode, asleepSince) = local.hostWait, asleepSince != nil else { return false }
        endHostWait()
        local.hostWait = (mode, nil)
        return true
    }

    /// The nested run that suspended a host's wait returns: the loop no longer publishes a
    /// sleep, so work posted from now on would not reach the host's descriptor. The backend's
    /// waker is written instead: the host wakes, dispatches once, and prepares afresh.
    func resumeHostWaitAfterRun() {
        sleep.waker.wake()
    }

    /// Ends the host wait in progress, if any: the loop is awake again.
    private func endHostWait() {
        guard let (_, asleepSince) = local.hostWait else { return }
        local.hostWait = nil
        guard let asleepSince else { return }
        _ = sleep.endSleep()
        instruments.hostWaitEnded(asleepSince: asleepSince)
    }

    /// A wait that polls, its events dropped: they were for no source of the mode served
    /// (level-triggered, a ready descriptor reports again once a source watches it).
    private func drainBackendForHost() {
        registrar.withBackend { backend in
            do {
                try backend.wait(timeout: .zero, into: &local.events)
            } catch {
                trap("RunLoopKit: \(backend.kind) wait failed: \(error)")
            }
            local.events.removeAll(keepingCapacity: true)
        }
    }
}

/// What a loop keeps of its backend's ``EmbeddingSupport``: the descriptor, or why there is
/// none; not the preparation step, which may hold the backend.
enum HostDescriptorOffer: Sendable {
    case descriptor(Int32)
    case unsupported(reason: String)

    init(_ support: EmbeddingSupport) {
        switch support {
        case let .descriptor(fd, _): self = .descriptor(fd)
        case let .unsupported(reason): self = .unsupported(reason: reason)
        }
    }
}
