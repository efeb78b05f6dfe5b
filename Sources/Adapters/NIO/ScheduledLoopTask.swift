import NIOCore
import RunLoopKit

/// A task given to ``LoopEventLoop/scheduleTask(deadline:_:)``: a one-shot loop timer in the
/// common modes, and the promise it completes.
///
/// Exactly one of running, cancelling and failing at the loop's end wins (decided under the
/// task's lock): a cancel that races the timer's callback on another thread either stops the
/// task from running or comes too late and has no effect, as NIO's `Scheduled.cancel()` allows.
final class ScheduledLoopTask<T>: PendingScheduledTask {
    private enum Phase {
        /// Not run yet; the timer armed for it, if any (the timer's callback holds this
        /// object, so it is dropped here once the task is done: no cycle outlives it).
        case pending(Loop.Timer?)
        case done
    }

    let deadline: NIODeadline
    private let body: @Sendable () throws -> T
    private let promise: EventLoopPromise<T>
    private let loop: Loop
    private let afterEnd: AfterEnd
    private let phase = Lock(Phase.pending(nil))

    init(
        deadline: NIODeadline, body: @escaping @Sendable () throws -> T, promise: EventLoopPromise<T>, loop: Loop,
        afterEnd: AfterEnd
    ) {
        (self.deadline, self.body, self.promise, self.loop, self.afterEnd) = (deadline, body, promise, loop, afterEnd)
    }

    /// Adds a timer at the loop-clock instant of ``deadline`` to the loop's common modes,
    /// unless the task is done.
    func arm() {
        let timer: Loop.Timer
        do {
            timer = try Loop.Timer(fireAt: DeadlineConversion.instant(for: deadline)) { [self] _ in fire() }
        } catch {
            trap("LoopEventLoop.scheduleTask: a one-shot timer without tolerance was refused: \(error)")
        }
        let armed: Bool = phase.withLock { phase in
            guard case .pending = phase else { return false }
            phase = .pending(timer)
            return true
        }
        // A cancel between here and `add` invalidates the timer first, and adding an
        // invalidated timer has no effect (rule I2). A one-shot timer (T2) never fires before
        // its instant (T8); an instant already past means now (T1).
        if armed { loop.add(timer, to: .common) }
    }

    /// The timer fired, on the loop's thread: runs the task unless it is done, or waits for the
    /// rest of the deadline if the monotonic clock says it is not due yet (never early).
    private func fire() {
        guard NIODeadline.now() >= deadline else { return arm() }
        let won: Bool = phase.withLock { phase in
            guard case .pending = phase else { return false }
            phase = .done
            return true
        }
        guard won else { return }
        afterEnd.unregister(self)
        do {
            // Unchecked isolation is sound here: the timer fires on the loop's thread.
            promise.assumeIsolatedUnsafeUnchecked().succeed(try body())
        } catch {
            promise.fail(error)
        }
    }

    /// `Scheduled.cancel()`: fails the promise with `EventLoopError.cancelled` unless the task
    /// already ran or failed.
    func cancel() { fail(EventLoopError.cancelled) }

    func fail(_ error: EventLoopError) {
        let outcome: (won: Bool, timer: Loop.Timer?) = phase.withLock { phase in
            guard case let .pending(timer) = phase else { return (false, nil) }
            phase = .done
            return (true, timer)
        }
        guard outcome.won else { return }
        outcome.timer?.invalidate()
        afterEnd.unregister(self)
        promise.fail(error)
    }
}
