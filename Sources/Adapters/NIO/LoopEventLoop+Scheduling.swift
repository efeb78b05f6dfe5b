import NIOCore
import RunLoopKit

extension LoopEventLoop {
    /// Runs `task` on the loop's thread, in its common modes, once `deadline` has passed.
    ///
    /// The task runs on a one-shot loop timer at the loop-clock instant matching `deadline`
    /// (NIO's deadlines are `CLOCK_MONOTONIC`, the loop's timers `CLOCK_BOOTTIME`); it never runs
    /// before `deadline` by `NIODeadline.now()`. `Scheduled.cancel()` before it runs invalidates
    /// the timer and fails the future with `EventLoopError.cancelled`. If the loop's thread ends
    /// first (or has ended), the future fails with `EventLoopError.shutdown`. Safe to call from
    /// any thread.
    @discardableResult
    public func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        let promise = makePromise(of: T.self)
        let scheduled = ScheduledLoopTask(
            deadline: deadline, body: task, promise: promise, loop: loop, afterEnd: afterEnd)
        guard afterEnd.register(scheduled) else {
            promise.fail(EventLoopError.shutdown)
            return Scheduled(promise: promise, cancellationTask: {})
        }
        scheduled.arm()
        return Scheduled(promise: promise, cancellationTask: { scheduled.cancel() })
    }

    /// Runs `task` on the loop's thread, in its common modes, once `delay` has passed:
    /// ``scheduleTask(deadline:_:)`` at `NIODeadline.now() + delay`.
    @discardableResult
    public func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        scheduleTask(deadline: .now() + delay, task)
    }
}
