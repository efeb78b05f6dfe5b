import Dispatch
import RunLoopKit

/// A task executor that runs the jobs given to it on one thread of its own, in order, until
/// it is finished: what ``offThePool(_:)`` runs a test's blocking body on.
///
/// Jobs given after ``finish()`` (a task that had preferred this executor, resuming later)
/// go to the global concurrent executor: a finished executor loses none.
final class OwnThreadExecutor: TaskExecutor {
    private let state = Lock<(jobs: [UnownedJob], finished: Bool)>(([], false))
    /// Signalled once per job queued, and once by ``finish()``.
    private let queued = DispatchSemaphore(value: 0)

    /// Starts the executor's thread, detached: it ends by itself once finished and idle.
    static func start() throws -> OwnThreadExecutor {
        let executor = OwnThreadExecutor()
        try PThread.spawn(name: "off-the-pool") { executor.serve() }.detach()
        return executor
    }

    private init() {}

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let accepted = state.withLock { state in
            if !state.finished { state.jobs.append(unowned) }
            return !state.finished
        }
        if accepted {
            queued.signal()
        } else {
            globalConcurrentExecutor.enqueue(unowned)
        }
    }

    /// Lets the thread end once the jobs queued so far have run. Never waits: it may be called
    /// on the executor's own thread.
    func finish() {
        state.withLock { $0.finished = true }
        queued.signal()
    }

    private func serve() {
        while let job = nextJob() { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Waits for the next job; nil once finished and idle (jobs signal once each, and
    /// ``finish()`` once: woken with no job queued means finished).
    private func nextJob() -> UnownedJob? {
        queued.wait()
        return state.withLock { state in state.jobs.isEmpty ? nil : state.jobs.removeFirst() }
    }
}
