import NIOCore
import RunLoopKit

extension LoopEventLoop {
    /// Runs `task` on the loop's thread, in its common modes, once `deadline` has passed.
    ///
    /// The task runs on a one-shot loop timer at the loop-clock instant matching `deadline`
    /// (NIO's deadlines are `CLOCK_MONOTONIC`, the loop's timers `CLOCK_BOOTTIME`); it never runs
    /// before `deadline` by ``now``, which on a loop on virtual time is the loop's time. Tasks
    /// scheduled for one deadline run in the order they were scheduled. `Scheduled.cancel()`
    /// before it runs invalidates the timer, releases `task` (and all it captures) and fails the
    /// future with `EventLoopError.cancelled`. If the loop's thread ends first (or has ended),
    /// the future fails with `EventLoopError.shutdown` (on the executor that stands for the ended
    /// loop), also when `cancel()` is called after the end. Safe to call from any thread.
    @discardableResult
    public func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        let promise = makePromise(of: T.self)
        let scheduled = ScheduledLoopTask(
            deadline: deadline, work: ScheduledClosure(body: task, promise: promise), loop: loop, afterEnd: afterEnd,
            deadlines: deadlines)
        guard afterEnd.register(scheduled) else {
            promise.fail(EventLoopError.shutdown)
            return Scheduled(promise: promise, cancellationTask: {})
        }
        scheduled.arm()
        return Scheduled(promise: promise, cancellationTask: { scheduled.cancel() })
    }

    /// Runs `task` on the loop's thread, in its common modes, once `delay` has passed:
    /// ``scheduleTask(deadline:_:)`` at ``now`` `+ delay` (on a loop on virtual time, `delay`
    /// of the loop's time).
    @discardableResult
    public func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        scheduleTask(deadline: now + delay, task)
    }

    /// Calls `handler.handleScheduledCallback(eventLoop:)` on the loop's thread, in its common
    /// modes, once `deadline` has passed; or, exactly once instead,
    /// `handler.didCancelScheduledCallback(eventLoop:)` if the callback is cancelled first or is
    /// still pending when the loop ends.
    ///
    /// The callback is timed and ordered as ``scheduleTask(deadline:_:)`` is (never before
    /// `deadline`; callbacks and tasks due at one deadline run in the order scheduled).
    /// ``cancelScheduledCallback(_:)`` (`NIOScheduledCallback.cancel()`) calls
    /// `didCancelScheduledCallback` on the cancelling thread, as NIO's own loops do; when the
    /// loop's thread ends, every callback still pending hears it on the executor that stands for
    /// the ended loop (a thread of Dispatch's pool, with ``inEventLoop`` true), in deadline
    /// order; a cancel after either has no effect. Safe to call from any thread.
    ///
    /// - Throws: `EventLoopError.shutdown` if the loop has already ended: the handler is not
    ///   called (where NIO's own loops print an error and drop the callback).
    @discardableResult
    public func scheduleCallback(
        at deadline: NIODeadline, handler: some (NIOScheduledCallbackHandler & Sendable)
    ) throws -> NIOScheduledCallback {
        let scheduled = ScheduledLoopTask(
            deadline: deadline, work: ScheduledCallbackWork(handler: handler, eventLoop: self), loop: loop,
            afterEnd: afterEnd, deadlines: deadlines)
        guard afterEnd.register(scheduled) else { throw EventLoopError.shutdown }
        scheduled.arm()
        return NIOScheduledCallback(self, id: scheduled.id)
    }

    /// Calls ``scheduleCallback(at:handler:)`` at ``now`` `+ amount`.
    @discardableResult
    public func scheduleCallback(
        in amount: TimeAmount, handler: some (NIOScheduledCallbackHandler & Sendable)
    ) throws -> NIOScheduledCallback {
        try scheduleCallback(at: now + amount, handler: handler)
    }

    /// Cancels a callback from ``scheduleCallback(at:handler:)``: its handler's
    /// `didCancelScheduledCallback(eventLoop:)` runs now, on the calling thread, unless the
    /// callback already ran or was cancelled (then nothing happens). Safe to call from any
    /// thread.
    ///
    /// Traps, naming the adapter, if `scheduledCallback` did not come from this event loop's
    /// ``scheduleCallback(at:handler:)``.
    public func cancelScheduledCallback(_ scheduledCallback: NIOScheduledCallback) {
        guard let id = scheduledCallback.customCallbackID else {
            trap("\(self).cancelScheduledCallback: the callback was not scheduled on this event loop")
        }
        afterEnd.pendingTask(id: id)?.cancel()
    }
}
