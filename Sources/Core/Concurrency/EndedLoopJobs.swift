import Dispatch
import Glibc
import Synchronization

/// The serial executor that stands for a loop once it has ended, so that no task waits for ever
/// on a loop that will never run it again [E3].
///
/// A job enqueued on a loop travels as a block. When the loop drops that block — it was still
/// queued when the loop was torn down (L5), a stopping ``LoopThread`` refused it (E2), or it came
/// after the end — the job is handed here instead of being lost: a task whose executor is the
/// loop (an actor isolated to it, or a task preferring it) would otherwise never resume, and
/// whatever awaits that task would wait for ever.
///
/// Jobs handed here before the loop has ended are held until it has (a stopping loop still runs
/// its last blocks, and a job must never run beside them). From the end on, they run on a thread
/// of Dispatch's global pool — never inline in the call that hands them over — one at a time, in
/// the order handed over, isolated to the loop's executor (``Loop/checkIsolated()`` passes there,
/// since that code is the actor's). The thread is not the loop's: ``LoopBound`` values and
/// ``Loop/currentIfCreated`` answer as anywhere else off the loop's thread.
///
/// Adapters hand their own dropped work here too (``Loop/runOnEndedLoopExecutor(_:)``): the
/// SwiftNIO adapter's `execute` work and its end-of-loop failures. One serializer stands for the
/// ended loop, so an actor isolated to the loop and the adapter's event-loop work never run
/// side by side after the end, as they never do before it.
final class EndedLoopJobs: Sendable {
    /// What is handed over: a job of Swift concurrency, or an adapter's closure.
    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct State {
        var hasEnded = false
        /// A drain is queued or running; it clears this when it finds nothing left.
        var isDraining = false
        var held: [Work] = []
    }

    // A leaf lock: nothing else is locked while it is held.
    private let state = Lock(State())
    /// The thread running a job here (`pthread_self()`), 0 when none; written by the draining
    /// thread only.
    private let servingThread = Atomic<UInt>(0)

    /// Whether the calling thread is running one of the ended loop's jobs.
    var isServingOnCurrentThread: Bool {
        let serving = servingThread.load(ordering: .relaxed)
        return serving != 0 && serving == pthread_self()
    }

    /// Takes `job`, which `loop` dropped: held until the loop has ended, then run.
    func take(_ job: UnownedJob, droppedBy loop: Loop) {
        take(.job(job), for: loop)
    }

    /// Takes an adapter's `work` for `loop`: held until the loop has ended, then run, in order
    /// with the jobs.
    func take(_ work: @escaping @Sendable () -> Void, for loop: Loop) {
        take(.closure(work), for: loop)
    }

    private func take(_ work: Work, for loop: Loop) {
        let mustDrain: Bool = state.withLock { state in
            state.held.append(work)
            guard state.hasEnded, !state.isDraining else { return false }
            state.isDraining = true
            return true
        }
        if mustDrain { drain(for: loop) }
    }

    /// The loop has ended (its teardown, on its thread, after it dropped its queued blocks):
    /// runs what was held, and from now on what comes.
    func loopDidEnd(_ loop: Loop) {
        let mustDrain: Bool = state.withLock { state in
            state.hasEnded = true
            guard !state.held.isEmpty, !state.isDraining else { return false }
            state.isDraining = true
            return true
        }
        if mustDrain { drain(for: loop) }
    }

    /// Runs the held jobs on a pool thread until none is left.
    private func drain(for loop: Loop) {
        DispatchQueue.global().async { [self] in
            servingThread.store(pthread_self(), ordering: .relaxed)
            // `takeHeldOrStop` clears `servingThread` in the critical section that ends the
            // drain: cleared after it, it could erase the thread of a drain started meanwhile.
            while let batch = takeHeldOrStop() {
                for work in batch {
                    switch work {
                    case let .job(job):
                        job.runSynchronously(
                            isolatedTo: loop.asUnownedSerialExecutor(), taskExecutor: loop.asUnownedTaskExecutor())
                    case let .closure(closure):
                        closure()
                    }
                }
            }
        }
    }

    /// What is held, or nil after ending the drain (in the same critical section that finds
    /// nothing, so a job handed over meanwhile is never stranded).
    private func takeHeldOrStop() -> [Work]? {
        state.withLock { state in
            guard !state.held.isEmpty else {
                servingThread.store(0, ordering: .relaxed)
                state.isDraining = false
                return nil
            }
            defer { state.held = [] }
            return state.held
        }
    }
}

/// A job on its way to the loop as a block: run by the block, or, when the loop drops the block
/// unrun (releasing it is how a loop drops a block), handed to the loop's ``EndedLoopJobs``.
final class EnqueuedJob: @unchecked Sendable {
    // @unchecked: `job` is taken by the block's one run, on the loop's thread; otherwise it is
    // read once, in `deinit`, when no other reference is left.
    private var job: UnownedJob?
    private let loop: Loop

    init(_ job: UnownedJob, on loop: Loop) {
        self.job = job
        self.loop = loop
    }

    /// Runs the job on the loop's thread, isolated to the loop.
    func run() {
        guard let job = job.take() else { return }
        job.runSynchronously(isolatedTo: loop.asUnownedSerialExecutor(), taskExecutor: loop.asUnownedTaskExecutor())
    }

    deinit {
        if let job { loop.endedJobs.take(job, droppedBy: loop) }
    }
}
