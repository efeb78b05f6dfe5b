// LoopExecutorFactory needs the runtime's custom-executor SPI as Swift 6.3 ships it (tested with
// 6.3.1); with an older compiler RunLoopKit builds without it.
#if compiler(>=6.3)
import RunLoopCore
import Synchronization
@_spi(ExperimentalCustomExecutors) import _Concurrency

/// The main actor's executor once ``LoopExecutorFactory`` is installed: its jobs run on the
/// main thread, in the main loop's common modes, in the order enqueued.
///
/// It resolves `Loop.main` at each use, so the first job (or the runtime's call to `run()`)
/// creates the main loop only if the program did not create it first: a `main` may choose its
/// backend with `Loop.current(backend:)` as its first statement.
final class MainLoopExecutor: MainExecutor {
    /// The one instance: the main actor has one executor.
    static let shared = MainLoopExecutor()

    /// One entry per active `runUntil(_:)`, innermost last.
    private let runs = Lock<[ExecutorRun]>([])

    private init() {}

    /// Runs `job` on the main loop's thread at its next pass in a common mode. Safe from any
    /// thread.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        Loop.main.perform { [self] in
            job.runSynchronously(on: asUnownedSerialExecutor())
        }
    }

    /// Runs the main loop in its default mode until `stop()`.
    ///
    /// Swift's async entry point calls this on the main thread once `main`'s synchronous part
    /// has returned; an async `main` that returns ends the process with `exit(0)` from inside
    /// the loop, so this run does not return then.
    func run() throws {
        try runUntil { false }
    }

    /// Runs the main loop in its default mode until `stop()` or until `condition` holds.
    ///
    /// `condition` is checked on the main thread before each pass and before the loop sleeps:
    /// whatever makes it true must run on the main loop (a job, a block, a callout) or wake it.
    /// Must be called on the main thread; traps elsewhere, and when the default mode cannot
    /// serve the queue (inside a `DispatchQueue.main` block, where a nested run would return
    /// at once and never sleep).
    func runUntil(_ condition: () -> Bool) throws {
        trap(
            unless: Loop.isOnMainThread,
            "RunLoopKit: the main actor's executor (the main loop) can only be run on the main thread")
        let loop = Loop.main
        withoutActuallyEscaping(condition) { condition in
            let run = ExecutorRun(depth: loop.runDepth + 1, condition: condition)
            runs.withLock { $0.append(run) }
            // The check runs on every pass of this run and of none nested in it: a run nested
            // in a callout ends on its own terms, and this one ends at its next pass after.
            let observer = Loop.Observer(activities: [.beforeTimers, .beforeWaiting], order: .max) { [self] _, _ in
                if isInnermost(run), loop.runDepth == run.depth, run.shouldEnd { loop.stop() }
            }
            loop.add(observer, to: .common)
            defer {
                observer.invalidate()
                runs.withLock { _ = $0.removeLast() }
                run.releaseCondition()
            }
            while !run.shouldEnd {
                let result = loop.run(.default)
                trap(
                    unless: result != .finished,
                    "RunLoopKit: the main actor's executor cannot run the main loop here: its default mode serves nothing (inside a DispatchQueue.main block?)"
                )
            }
        }
    }

    /// Ends the innermost active `runUntil(_:)` (or `run()`) once control is back in it:
    /// runs of the main loop nested inside it are not cut short. No effect when none is
    /// active. Safe from any thread.
    func stop() {
        let requested: Bool = runs.withLock { runs in
            guard let innermost = runs.last else { return false }
            innermost.stopRequested.store(true, ordering: .releasing)
            return true
        }
        // The loop may sleep: its next pass sees the request.
        if requested { Loop.main.wakeUp() }
    }

    /// Traps unless called on the main thread: code isolated to the main actor runs nowhere
    /// else.
    func checkIsolated() {
        trap(unless: Loop.isOnMainThread, "RunLoopKit: expected to run on the main thread (the main actor)")
    }

    /// Whether the caller runs on the main thread, where the main actor's jobs run.
    func isIsolatingCurrentContext() -> Bool? {
        Loop.isOnMainThread
    }

    private func isInnermost(_ run: ExecutorRun) -> Bool {
        runs.withLock { $0.last === run }
    }
}

/// One active ``MainLoopExecutor/runUntil(_:)``: the depth of the loop run it started, its
/// stop request and its condition.
private final class ExecutorRun: @unchecked Sendable {
    // @unchecked: `condition` is read and cleared on the main thread only (by the run itself
    // and by its observer, which the loop calls on its own thread).
    let depth: Int
    let stopRequested = Atomic<Bool>(false)
    private var condition: (() -> Bool)?

    init(depth: Int, condition: @escaping () -> Bool) {
        self.depth = depth
        self.condition = condition
    }

    /// Whether the run must end: stopped, or its condition holds. On the main thread.
    var shouldEnd: Bool {
        stopRequested.load(ordering: .acquiring) || condition?() == true
    }

    /// Drops the condition, which must not outlive the `runUntil` call that lent it.
    func releaseCondition() { condition = nil }
}
#endif
