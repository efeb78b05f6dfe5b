extension Loop {
    /// [R6] Waits in the backend for the mode's ports, its next timer, the run's deadline or a
    /// wake.
    func waitForWork(
        in mode: Mode, polls: Bool, drainsBackend: Bool, until runDeadline: Int64?
    ) -> WaitOutcome {
        publish(.beforeWaiting)
        syncDescriptors(for: mode)
        if polls {
            // [R6, R11] A poll is a wait that returns at once: it consumes a pending wakeUp.
            hints.consumeWakeByPolling()
            // With no descriptor to ask about, the kernel has nothing to tell a poll.
            // A backend whose own sources are a pass phase, or a wake a host loop saw on the
            // backend's descriptor, has something to tell all the same.
            if registrar.watchesNothing, !ownSourcesInPassPhase, !drainsBackend {
                return .polled
            }
        }
        return registrar.withBackend { backend in
            let plan = polls ? .poll : decideSleep(in: mode, until: runDeadline, for: .loop)
            if plan.sleeps { local.timerSlack.apply(plan.slack) }
            return wait(in: backend, as: plan)
        } ?? .polled
    }

    /// Waits as `plan` says. A wait that returns with nothing to do before its deadline (a
    /// signal interrupted it, or a wake posted for an earlier sleep arrived late) waits
    /// again for what is left: every wait that ends has a reason [C3].
    ///
    /// The timer slack narrowed for this wait stays narrowed after it (callouts run with it):
    /// putting it back would cost a system call between a timer's wake and its callout, and
    /// another before the next exact wait. A wait that needs the thread's own slack restores
    /// it, and so does the end of the outermost run.
    func wait(in backend: any Backend, as plan: SleepPlan) -> WaitOutcome {
        // A sleep ends the loop's stretch of work and is counted: these two times bound it.
        let sleptAt: Int64? = plan.sleeps ? instruments.fallAsleep() : nil
        // Set when the loop below ends on its deadline: a timer's wake reads the clock once.
        var reachedDeadline = false
        while true {
            let timeout: Duration?
            if !plan.sleeps {
                timeout = .zero
            } else if let deadline = plan.deadline {
                timeout = Duration.nanoseconds(max(0, deadline.subtractingSaturating(nowNanoseconds)))
            } else {
                timeout = nil
            }
            do {
                try backend.wait(timeout: timeout, into: &local.events)
            } catch {
                // Interrupts, old kernels and sandboxes are handled by the backends; what is
                // left is a broken invariant (a closed epoll descriptor, say).
                trap("RunLoopKit: \(backend.kind) wait failed: \(error)")
            }
            guard plan.sleeps, local.events.isEmpty, !sleep.wasWoken else { break }
            // The backend's own sources (GLib's) became ready: the pass dispatches them.
            if ownSourcesInPassPhase, case let .passPhase(phase) = backend.ownSources, phase.hasOwnSourcesReady {
                break
            }
            if let deadline = plan.deadline, nowNanoseconds >= deadline {
                reachedDeadline = true
                break
            }
        }
        guard let sleptAt else { return .polled }
        // `sleepDeadline` is left as it is: it only matters while the loop sleeps, and the
        // next decision to sleep sets it again.
        let woken = sleep.endSleep()
        instruments.accountWake(sleptAt: sleptAt)
        // A wait that ended on an event may have reached its deadline too.
        reachedDeadline = reachedDeadline || plan.deadline.map { nowNanoseconds >= $0 } ?? false
        return .slept(woken: woken, reachedDeadline: reachedDeadline)
    }
}
