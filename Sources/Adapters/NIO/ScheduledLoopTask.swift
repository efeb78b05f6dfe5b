import NIOCore
import RunLoopKit

/// What a scheduled task does when it comes due, and when it is cancelled or the loop ends
/// first: a `scheduleTask` closure and its promise, or a `scheduleCallback` handler.
protocol ScheduledWork: Sendable {
    /// The task is due: runs it, on the loop's thread.
    func run()
    /// The task will never run: cancelled (`EventLoopError.cancelled`) or the loop ended first
    /// (`EventLoopError.shutdown`).
    func didNotRun(_ error: EventLoopError)
}

/// A task given to ``LoopEventLoop/scheduleTask(deadline:_:)`` or
/// ``LoopEventLoop/scheduleCallback(at:handler:)``: a one-shot loop timer in the common modes, and
/// the work it runs.
///
/// Exactly one of running, cancelling and failing at the loop's end wins (decided under the
/// task's lock): a cancel that races the timer's callback on another thread either stops the
/// task from running or comes too late and has no effect, as NIO's `Scheduled.cancel()` allows.
/// The winner takes the work out of the task, so once the task is done its closure and all it
/// captures are released, though the `Scheduled` handle, which holds this object, lives on (as
/// NIO's loops release a cancelled task's closure at once).
final class ScheduledLoopTask<Work: ScheduledWork>: PendingScheduledTask {
    private enum Phase {
        /// Not run yet: the work, and the timer armed for it, if any (the timer's callback holds
        /// this object, so the timer is dropped here once the task is done: no cycle outlives
        /// it).
        case pending(Work, Loop.Timer?)
        case done
    }

    let deadline: NIODeadline
    let id: UInt64
    private let loop: Loop
    private let afterEnd: AfterEnd
    private let deadlines: DeadlineClock
    private let phase: Lock<Phase>

    init(deadline: NIODeadline, work: Work, loop: Loop, afterEnd: AfterEnd, deadlines: DeadlineClock) {
        (self.deadline, self.loop, self.afterEnd, self.deadlines) = (deadline, loop, afterEnd, deadlines)
        self.id = afterEnd.nextTaskID()
        self.phase = Lock(.pending(work, nil))
    }

    /// Adds a timer at the loop-clock instant of ``deadline`` (or at `instant`) to the loop's
    /// common modes, unless the task is done.
    func arm(at instant: ContinuousClock.Instant? = nil) {
        let timer: Loop.Timer
        do {
            timer = try Loop.Timer(fireAt: instant ?? deadlines.instant(for: deadline)) { [self] _ in
                fire()
            }
        } catch {
            trap("LoopEventLoop.scheduleTask: a one-shot timer without tolerance was refused: \(error)")
        }
        let armed: Bool = phase.withLock { phase in
            guard case let .pending(work, _) = phase else { return false }
            phase = .pending(work, timer)
            return true
        }
        // A cancel between here and `add` invalidates the timer first, and adding an
        // invalidated timer has no effect (rule I2). A one-shot timer (T2) never fires before
        // its instant (T8); an instant already past means now (T1).
        if armed { loop.add(timer, to: .common) }
    }

    /// The timer fired, on the loop's thread: runs the task unless it is done, or waits for the
    /// rest of the deadline if the monotonic clock says it is not due yet (never early; only
    /// after a suspend the conversion has not seen yet; on virtual time, never).
    private func fire() {
        guard deadlines.now >= deadline else { return arm(at: deadlines.restOf(deadline)) }
        guard let work = take() else { return }
        afterEnd.unregister(self)
        work.run()
    }

    /// `Scheduled.cancel()`: the work hears `EventLoopError.cancelled` unless the task already
    /// ran or failed.
    func cancel() { fail(EventLoopError.cancelled) }

    func fail(_ error: EventLoopError) {
        guard let work = end() else { return }
        afterEnd.unregister(self)
        work.didNotRun(error)
    }

    func claimForShutdown() -> (@Sendable () -> Void)? {
        guard let work = end() else { return nil }
        return { work.didNotRun(EventLoopError.shutdown) }
    }

    /// Ends the task without running it, if this call is the one that ends it: its timer is
    /// invalidated, and its work returned for telling.
    private func end() -> Work? {
        let outcome: (work: Work, timer: Loop.Timer?)? = phase.withLock { phase in
            guard case let .pending(work, timer) = phase else { return nil }
            phase = .done
            return (work, timer)
        }
        outcome?.timer?.invalidate()
        return outcome?.work
    }

    /// The work, if this call is the one that ends the task.
    private func take() -> Work? {
        phase.withLock { phase in
            guard case let .pending(work, _) = phase else { return nil }
            phase = .done
            return work
        }
    }
}

/// A `scheduleTask` closure and the promise its result completes.
struct ScheduledClosure<T>: ScheduledWork {
    let body: @Sendable () throws -> T
    let promise: EventLoopPromise<T>

    func run() {
        do {
            // Unchecked isolation is sound here: the timer fires on the loop's thread.
            promise.assumeIsolatedUnsafeUnchecked().succeed(try body())
        } catch {
            promise.fail(error)
        }
    }

    func didNotRun(_ error: EventLoopError) { promise.fail(error) }
}

/// A `scheduleCallback` handler: told once, either that the callback is due or that it was
/// cancelled (explicitly, or by the loop's end).
struct ScheduledCallbackWork<Handler: NIOScheduledCallbackHandler & Sendable>: ScheduledWork {
    let handler: Handler
    let eventLoop: LoopEventLoop

    func run() { handler.handleScheduledCallback(eventLoop: eventLoop) }

    func didNotRun(_ error: EventLoopError) { handler.didCancelScheduledCallback(eventLoop: eventLoop) }
}
