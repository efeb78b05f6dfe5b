import Synchronization

private let commonRunReported = Atomic<Bool>(false)

extension Loop {
    /// Runs the loop in `mode` until it is stopped, times out, runs out of work, or (if asked)
    /// has handled a source.
    ///
    /// Runs nest: a callout may run the loop again, in any mode. Must be called on the loop's
    /// own thread; calling it elsewhere traps with a message.
    ///
    /// - Parameters:
    ///   - mode: the mode to run. Running ``Mode/common`` is a usage error: it returns
    ///     ``RunResult/finished`` at once and is reported once per process through ``logger``
    ///     (by default a line on standard error).
    ///   - timeout: how long to run at most; `nil` runs without limit, zero or negative polls
    ///     once without sleeping.
    ///   - returnAfterSourceHandled: return ``RunResult/handledSource`` after the first pass
    ///     that handled a source.
    /// - Returns: why the run ended.
    @discardableResult
    public func run(
        _ mode: Mode = .default, timeout: Duration? = nil, returnAfterSourceHandled: Bool = false
    ) -> RunResult {
        trap(
            unless: isOnOwnThread,
            "Loop.run(_:timeout:returnAfterSourceHandled:) called on a thread that is not \(self)'s own; a loop runs only on its own thread"
        )
        return run(mode, timeout: timeout, returnAfterSourceHandled: returnAfterSourceHandled, drainsBackend: false)
            .result
    }

    /// ``run(_:timeout:returnAfterSourceHandled:)`` on the loop's own thread; `drainsBackend`
    /// makes every wait reach the backend (see ``RunContext/drainsBackend``). Also returns
    /// whether the run was stopped by its end, whatever its result (a poll's is
    /// ``RunResult/timedOut``): a host's dispatch says `.stopped` then [H2].
    func run(
        _ mode: Mode, timeout: Duration?, returnAfterSourceHandled: Bool, drainsBackend: Bool
    ) -> (result: RunResult, stopped: Bool) {
        if mode == .common {
            // [M6] Reported once per process, through Loop.logger.
            if !commonRunReported.exchange(true, ordering: .relaxed) { reportCommonModeRun() }
            return (.finished, false)
        }
        bindMainQueueIfMain()
        // [R1] A missing or empty mode: finished, no observer notified.
        let (entered, outermost, stopsAtEntry): (Bool, Bool, UInt64) = state.withLock { state in
            guard !state.isTornDown, state.modes.contains(mode), !isEmpty(mode, state) else { return (false, false, 0) }
            // A host's wait under it (its dispatch's pass) does not make this run nested.
            let outermost = !state.runs.contains { $0.kind == .run }
            state.runs.append(RunRecord(mode: mode))
            // [W2] A run starts with no wake pending. Dropped under the lock that `wakeUp()`
            // decides under: a wake posted once this run is recorded is this run's, and kept.
            hints.dropWake()
            return (true, outermost, hints.stopRequests())
        }
        guard entered else { return (.finished, false) }
        // [H1] A run nested between a host's prepare and dispatch waits by itself meanwhile.
        let suspendedHostWait = suspendHostWaitForRun()
        defer { if suspendedHostWait { resumeHostWaitAfterRun() } }

        let enclosingPlace = instruments.enterRun(outermost: outermost)
        // [R11] A zero or negative timeout makes one pass that never sleeps.
        let isPoll = timeout.map { $0 <= .zero } ?? false
        var run = RunContext(
            mode: mode,
            // A poll never sleeps, so it needs no deadline (nor the clock read to make one).
            deadline: isPoll ? nil : timeout.map { nowNanoseconds.addingSaturating($0.nanosecondsRoundedUp) },
            isPoll: isPoll,
            returnAfterSourceHandled: returnAfterSourceHandled,
            drainsBackend: drainsBackend
        )
        // [R2] Entry; a stop() made by now (from an entry observer or another thread) ends the
        // run before its first pass. The lock is taken only when a stop was requested since the
        // run was recorded: the count of stops says so without it.
        // [G3] A backend whose own sources are a pass phase hears of the run first (GLib's acquires its
        // context for the run), and last.
        withOwnSourcePhase { $0.runWillBegin() }
        notifyObservers(.entry, in: mode)
        let maybeStopped = hints.stopRequests() != stopsAtEntry
        var result: RunResult? = maybeStopped && state.withLock { $0.runs.last!.stopped } ? .stopped : nil
        while result == nil {
            result = pass(&run)
        }
        // [R10] Exit.
        notifyObservers(.exit, in: mode)
        withOwnSourcePhase { $0.runDidEnd() }
        let stopped = state.withLock { state in
            // [W2] A wake still pending dies with the run that it was for; under the lock, so
            // that a wake posted after this, for the enclosing run, is kept.
            hints.dropWake()
            return state.runs.removeLast().stopped
        }
        instruments.leaveRun(outermost: outermost, returningTo: enclosingPlace)
        // The observers kept for notifications would keep them (and whatever their callbacks
        // hold) alive after they left the loop: kept only while the loop runs.
        if outermost {
            local.observers = .empty
            // The thread goes back to its own timer slack once no run of the loop is active:
            // what it does next is not the loop's business.
            local.timerSlack.restore()
        }
        return (result!, stopped)
    }
}

extension Loop {
    /// Why ``Loop/run(_:timeout:returnAfterSourceHandled:)`` returned.
    public enum RunResult: Sendable, Hashable, CustomStringConvertible {
        /// The mode did not exist or had no sources, timers or blocks left.
        case finished
        /// ``Loop/stop()`` ended the run.
        case stopped
        /// The run's timeout passed (a run with a zero or negative timeout always ends here).
        case timedOut
        /// A source was handled and the run was asked to return after one.
        case handledSource

        /// The case's name: `finished`, `stopped`, `timedOut` or `handledSource`.
        public var description: String {
            switch self {
            case .finished: "finished"
            case .stopped: "stopped"
            case .timedOut: "timedOut"
            case .handledSource: "handledSource"
            }
        }
    }
}
