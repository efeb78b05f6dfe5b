// `Task.sleep` on a loop's timers. Swift 6.3's runtime hands a sleeping task's wake-up job to
// a `SchedulingExecutor` (an `ExperimentalScheduling` SPI, in the private interface only):
// the task's executor preference when it has one, otherwise the default executor. It never
// asks the executor of the actor the task is isolated to, and it calls from the thread the
// sleep runs on (for an actor-isolated task, a thread of the default executor: `Task.sleep` is
// nonisolated), saying nothing of that actor. So the loop gets the sleeps of tasks that prefer
// it (`Task(executorPreference: loop)`, `withTaskExecutorPreference(loop)`), and only those;
// TaskSleepTests proves which way each kind of task goes.
#if compiler(>=6.3)
@_spi(ExperimentalScheduling) @_spi(ExperimentalCustomExecutors) import _Concurrency

@_spi(ExperimentalScheduling)
extension Loop: SchedulingExecutor {
    /// Runs `job` on the loop's thread once `instant` has passed on `clock`, on a timer of the
    /// loop's common modes with `tolerance` (so sleeps coalesce with the loop's timers).
    ///
    /// `ContinuousClock` is the loop's own clock (CLOCK_BOOTTIME): the instant is used as it
    /// is. `SuspendingClock` (CLOCK_MONOTONIC) is converted, never early: the timer is armed
    /// the remaining monotonic time from the loop's now, and re-armed for what is left should
    /// it fall due while the monotonic clock (which stops while the system is suspended) has
    /// not reached `instant`. Any other clock goes to the platform's default executor, as
    /// without RunLoopKit.
    ///
    /// The timer does not keep its modes alive: a cancelled sleep cannot take its job back
    /// (the runtime has no way to on 6.3), and a run must not wait for it. Safe to call from
    /// any thread.
    public func enqueue<C: Clock>(
        _ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C
    ) {
        if let instant = instant as? ContinuousClock.Instant {
            schedule(UnownedJob(job), at: instant, tolerance: tolerance as? Duration ?? .zero)
        } else if let instant = instant as? SuspendingClock.Instant {
            schedule(UnownedJob(job), suspendingDeadline: instant, tolerance: tolerance as? Duration ?? .zero)
        } else {
            platformScheduler.enqueue(job, at: instant, tolerance: tolerance, clock: clock)
        }
    }

    /// Runs `job` on the loop's thread once `delay` has passed on `clock`; the same rules as
    /// `enqueue(_:at:tolerance:clock:)`. Safe to call from any thread.
    public func enqueue<C: Clock>(
        _ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C
    ) {
        if clock is ContinuousClock || clock is SuspendingClock {
            enqueue(job, at: clock.now.advanced(by: delay), tolerance: tolerance, clock: clock)
        } else {
            platformScheduler.enqueue(job, after: delay, tolerance: tolerance, clock: clock)
        }
    }

    /// Where jobs timed by another clock go: the platform's default executor, which on Linux
    /// (Dispatch's global executor) is a scheduling one.
    private var platformScheduler: any SchedulingExecutor {
        guard let scheduler = PlatformExecutorFactory.defaultExecutor as? any SchedulingExecutor else {
            trap("RunLoopKit: the platform's default executor cannot schedule a job for later")
        }
        return scheduler
    }

    /// Arms a timer that does not keep its modes alive and runs `job` when it fires.
    private func schedule(_ job: UnownedJob, at instant: ContinuousClock.Instant, tolerance: Duration) {
        let pending = PendingSleepJob(job, handedOffAt: instant, tolerance: tolerance, clock: ContinuousClock())
        let timer = try! Timer(
            fireAt: instant, interval: nil, tolerance: max(tolerance, .zero), order: 0, keepsModeAlive: false
        ) { [self] _ in
            pending.take()?.runSynchronously(on: asUnownedTaskExecutor())
        }
        add(timer, to: .common)
    }

    /// Arms a timer for the monotonic time left until `deadline`, and again for what is left
    /// when it fires early by the monotonic clock (the system was suspended meanwhile).
    private func schedule(_ job: UnownedJob, suspendingDeadline deadline: SuspendingClock.Instant, tolerance: Duration)
    {
        // Monotonic now first: the loop's now, read after, is no earlier, so neither is the
        // instant armed.
        let remaining = SuspendingClock.now.duration(to: deadline)
        let pending = PendingSleepJob(job, handedOffAt: deadline, tolerance: tolerance, clock: SuspendingClock())
        let timer = try! Timer(
            fireAt: now + max(remaining, .zero), interval: nil, tolerance: max(tolerance, .zero), order: 0,
            keepsModeAlive: false
        ) { [self] _ in
            guard let job = pending.take() else { return }
            if SuspendingClock.now < deadline {
                schedule(job, suspendingDeadline: deadline, tolerance: tolerance)
            } else {
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
        add(timer, to: .common)
    }
}

/// A sleep's job that a loop timer holds until it fires. A timer released without firing (the
/// loop was torn down: its timers are invalidated) must not take the job with it: the runtime
/// allocated the job and frees it only by running it, and a sleeping task waits on it. So the
/// job goes to the platform's default executor, due at the same instant (never early): a
/// cancelled sleep's job then just ends, and its memory is freed (LeakSanitizer found those
/// leaked); a sleep still pending ends on time (its task resumes on its preferred executor,
/// the ended loop, which drops it like any job reaching an ended loop).
private final class PendingSleepJob: Sendable {
    private let job: Lock<UnownedJob?>
    private let handOff: @Sendable (UnownedJob) -> Void

    init<C: Clock>(_ job: UnownedJob, handedOffAt instant: C.Instant, tolerance: Duration, clock: C)
    where C.Duration == Duration {
        self.job = Lock(job)
        handOff = { job in
            guard let scheduler = PlatformExecutorFactory.defaultExecutor as? any SchedulingExecutor else {
                trap("RunLoopKit: the platform's default executor cannot schedule a job for later")
            }
            scheduler.enqueue(ExecutorJob(job), at: instant, tolerance: tolerance, clock: clock)
        }
    }

    /// The job, once: whoever takes it runs it.
    func take() -> UnownedJob? { job.withLock { $0.take() } }

    deinit {
        if let job = take() { handOff(job) }
    }
}
#endif
