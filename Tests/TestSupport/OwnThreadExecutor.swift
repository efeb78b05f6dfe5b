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
        try spawnThread { executor.serve() }
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
        while true {
            queued.wait()
            let next: UnownedJob? = state.withLock { state in
                state.jobs.isEmpty ? nil : state.jobs.removeFirst()
            }
            // Woken with no job: finish() was called (jobs signal once each, and it once).
            guard let next else { return }
            next.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
