extension Loop: SerialExecutor, TaskExecutor {
    /// Runs `job` on the loop's thread, in its common modes, in the order enqueued.
    ///
    /// This makes a loop usable as an actor's executor (`unownedExecutor`) and as a task
    /// executor preference: the work then runs on the loop's thread whenever it runs a common
    /// mode. Safe to call from any thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        perform { [self] in
            job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        }
    }

    /// The loop as an actor's executor.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless called on the loop's own thread: code isolated to a loop-backed actor
    /// runs nowhere else.
    public func checkIsolated() {
        trap(unless: isOnOwnThread, "expected to run on \(self)'s thread (the executor of this actor)")
    }
}
