extension Loop: SerialExecutor, TaskExecutor {
    /// Runs `job` on the loop's thread, in its common modes, in the order enqueued.
    ///
    /// This makes a loop usable as an actor's executor (`unownedExecutor`) and as a task
    /// executor preference: the work then runs on the loop's thread whenever it runs a common
    /// mode. Once the loop has ended, jobs it dropped or never got run instead on a serial
    /// executor that stands for the ended loop (rule E3): the task they belong to resumes, and
    /// the API it awaited on the loop reports the end. Safe to call from any thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        // The block holds the job in an object of its own, which hands the job on if the loop
        // drops the block unrun [E3].
        let enqueued = EnqueuedJob(UnownedJob(job), on: self)
        perform { enqueued.run() }
    }

    /// The loop as an actor's executor.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless called on the loop's own thread, or, once the loop has ended, in a job the
    /// ended loop's executor runs (rule E3): code isolated to a loop-backed actor runs nowhere
    /// else.
    public func checkIsolated() {
        trap(unless: isIsolatedHere, "expected to run on \(self)'s thread (the executor of this actor)")
    }

    /// Whether code isolated to an actor this loop executes may run on the calling thread:
    /// the loop's own thread, or a job the ended loop's executor runs (rule E3).
    var isIsolatedHere: Bool { isOnOwnThread || endedJobs.isServingOnCurrentThread }

    /// For adapters: runs `work` on the executor that stands for the loop once it has ended
    /// (rule E3): held until the loop has ended, then run on a thread of Dispatch's pool — never
    /// inline — one at a time, in the order handed over, together with the Swift jobs the loop
    /// dropped. An adapter's work dropped by the loop goes here, so that it never runs beside
    /// code isolated to the loop.
    package func runOnEndedLoopExecutor(_ work: @escaping @Sendable () -> Void) {
        endedJobs.take(work, for: self)
    }

    /// Whether the calling thread is running work of the ended loop's executor
    /// (``runOnEndedLoopExecutor(_:)``, or a job the loop dropped).
    package var isServingEndedLoopWork: Bool { endedJobs.isServingOnCurrentThread }
}

// What RunLoopKit's main-actor executor needs to know about a loop and the calling thread.

extension Loop {
    /// How many runs of this loop are active, nested in one another: 0 while it is not running,
    /// 1 inside an outermost run. Safe to call from any thread.
    ///
    /// An executor that drives a loop uses it to tell whether a run it started is still the
    /// innermost one (a callout may have nested another run inside it).
    package var runDepth: Int { state.withLock { $0.runs.count } }

    /// Whether the calling thread is the process's main thread; never creates a loop.
    package static var isOnMainThread: Bool { ThreadBinding.isMainThread }
}
