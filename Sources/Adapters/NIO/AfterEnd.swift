import Glibc
import NIOCore
import RunLoopKit
import Synchronization

/// What the adapter keeps so that nothing given to it waits for ever once the loop's thread
/// has ended: the scheduled tasks not yet run, and the work the loop dropped (a loop torn down
/// with its thread drops its queued blocks and invalidates its timers, rule L5; a stopping
/// `LoopThread` refuses blocks, rule E2).
///
/// Work the loop drops before it has ended (a ``LoopThread`` refuses blocks once stopping, while
/// its last blocks still run) is held until the end, so that it never runs beside the loop's own
/// work. From the end on, it is served at once by the thread that gives it (or by the thread
/// already serving, which picks it up): one task at a time, in order, with that thread holding
/// the event loop (``LoopEventLoop/inEventLoop`` is true for it, and for no other thread).
final class AfterEnd: Sendable {
    private struct State {
        var hasEnded = false
        var isServing = false
        var queued: [@Sendable () -> Void] = []
        var pending: [UInt64: any PendingScheduledTask] = [:]
    }

    private let state = Lock(State())
    /// The thread serving work after the end (`pthread_self()`), 0 when none; written under
    /// `state`'s lock, read without it by ``isServing``.
    private let servingThread = Atomic<UInt>(0)
    /// The last scheduled task's number: tasks are numbered in the order they are scheduled.
    private let lastTaskID = Atomic<UInt64>(0)

    /// Whether the calling thread is serving work after the loop's end.
    var isServing: Bool {
        let serving = servingThread.load(ordering: .acquiring)
        return serving != 0 && serving == pthread_self()
    }

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

    /// Runs `task`, which the loop dropped: held until the loop has ended, then served.
    func serve(_ task: @escaping @Sendable () -> Void) {
        let mustServe: Bool = state.withLock { state in
            state.queued.append(task)
            guard state.hasEnded, !state.isServing else { return false }
            startServing(&state)
            return true
        }
        if mustServe { serveQueuedThenStop() }
    }

    /// The loop has ended (on its thread, during its teardown): runs the work it dropped, then
    /// fails the scheduled tasks still pending with `EventLoopError.shutdown` (a scheduled
    /// callback's handler hears `didCancelScheduledCallback`), in the order they were due, as
    /// NIO's own loops do when they shut down (immediate tasks run, scheduled ones fail).
    func end() {
        let pending: [any PendingScheduledTask] = state.withLock { state in
            state.hasEnded = true
            // No one serves before the end (`serve` only holds work until then).
            startServing(&state)
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        while let batch = takeQueued(stoppingIfEmpty: false) { for task in batch { task() } }
        let byDeadline = pending.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
        for task in byDeadline { task.fail(EventLoopError.shutdown) }
        serveQueuedThenStop()
    }

    private func startServing(_ state: inout State) {
        state.isServing = true
        servingThread.store(pthread_self(), ordering: .releasing)
    }

    /// Runs queued work until none is left, then stops serving (in the same critical section
    /// that finds the queue empty, so work queued meanwhile is never stranded).
    private func serveQueuedThenStop() {
        while let batch = takeQueued(stoppingIfEmpty: true) { for task in batch { task() } }
    }

    private func takeQueued(stoppingIfEmpty: Bool) -> [@Sendable () -> Void]? {
        state.withLock { state in
            guard state.queued.isEmpty else {
                defer { state.queued = [] }
                return state.queued
            }
            if stoppingIfEmpty {
                state.isServing = false
                servingThread.store(0, ordering: .releasing)
            }
            return nil
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
    /// Fails the task with `EventLoopError.cancelled` unless it already ran or failed.
    func cancel()
}
