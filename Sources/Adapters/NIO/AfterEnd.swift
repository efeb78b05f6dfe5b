import NIOCore
import RunLoopKit
import Synchronization

/// What the adapter keeps so that nothing given to it waits for ever once the loop's thread
/// has ended: the scheduled tasks not yet run, and the work the loop dropped (a loop torn down
/// with its thread drops its queued blocks and invalidates its timers, rule L5; a stopping
/// `LoopThread` refuses blocks, rule E2).
///
/// Dropped work goes to the executor that stands for the ended loop (`Loop`'s rule E3): held
/// until the loop has ended, so that it never runs beside the loop's own work, then run on a
/// thread of Dispatch's pool, one task at a time, in order, together with the Swift jobs the
/// loop dropped — one serializer, so an actor isolated to the loop and the event loop's work
/// never run side by side after the end, as they never do before it. That thread holds the
/// event loop (``LoopEventLoop/inEventLoop`` is true for it while it serves, and for no other).
final class AfterEnd: Sendable {
    private struct State {
        var hasEnded = false
        var pending: [UInt64: any PendingScheduledTask] = [:]
    }

    private let loop: Loop
    private let state = Lock(State())
    /// The last scheduled task's number: tasks are numbered in the order they are scheduled.
    private let lastTaskID = Atomic<UInt64>(0)

    init(loop: Loop) {
        self.loop = loop
    }

    /// Whether the calling thread is serving work after the loop's end.
    var isServing: Bool { loop.isServingEndedLoopWork }

    /// A number for a new scheduled task, greater than every earlier one's.
    func nextTaskID() -> UInt64 {
        lastTaskID.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Records a scheduled task until it runs or fails; false once the loop has ended (the
    /// caller fails it with `EventLoopError.shutdown`).
    func register(_ task: any PendingScheduledTask) -> Bool {
        state.withLock { state in
            guard !state.hasEnded else { return false }
            state.pending[task.id] = task
            return true
        }
    }

    /// Forgets a scheduled task that ran, was cancelled or failed.
    func unregister(_ task: any PendingScheduledTask) {
        state.withLock { state in _ = state.pending.removeValue(forKey: task.id) }
    }

    /// The scheduled task numbered `id`, while it is pending.
    func pendingTask(id: UInt64) -> (any PendingScheduledTask)? {
        state.withLock { state in state.pending[id] }
    }

    /// Runs `task`, which the loop dropped, on the ended loop's executor.
    func serve(_ task: @escaping @Sendable () -> Void) {
        loop.runOnEndedLoopExecutor(task)
    }

    /// The loop is ending (on its thread, during its teardown, after it dropped its blocks): the
    /// scheduled tasks still pending end here, and after the work the loop dropped, the ended
    /// loop's executor fails them with `EventLoopError.shutdown` (a scheduled callback's handler
    /// hears `didCancelScheduledCallback`), in the order they were due, as NIO's own loops do
    /// when they shut down (immediate tasks run, scheduled ones fail).
    func end() {
        let pending: [any PendingScheduledTask] = state.withLock { state in
            state.hasEnded = true
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        // Each task is ended here, before the loop's thread is gone: a `cancel()` made once
        // `stop()` or `finish()` has returned must not turn the shutdown into a cancellation.
        // Only telling the work is left to the ended loop's executor.
        let failures = pending.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }.compactMap {
            $0.claimForShutdown()
        }
        guard !failures.isEmpty else { return }
        loop.runOnEndedLoopExecutor {
            for failure in failures { failure() }
        }
    }
}

/// A scheduled task as ``AfterEnd`` sees it: something to fail when the loop ends first, or to
/// cancel by its number.
protocol PendingScheduledTask: AnyObject, Sendable {
    /// When the task is due.
    var deadline: NIODeadline { get }
    /// Its number (``AfterEnd/nextTaskID()``): among tasks due at one deadline, the order they
    /// were scheduled in.
    var id: UInt64 { get }
    /// Fails the task with `error` unless it already ran, was cancelled or failed.
    func fail(_ error: EventLoopError)
    /// Ends the task now, on the ending thread, unless it already ran, was cancelled or failed,
    /// and returns what tells its work of the shutdown (run later, on the ended loop's
    /// executor); a cancel from now on does nothing.
    func claimForShutdown() -> (@Sendable () -> Void)?
    /// Fails the task with `EventLoopError.cancelled` unless it already ran or failed.
    func cancel()
}
