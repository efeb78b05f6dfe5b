import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// A loop on a thread of its own, parked in a mode that is not common (`"parked"`), so that
/// blocks for the common modes stay queued until the test says what happens next: the thread
/// ends (tearing the loop down with them queued) or the loop drains its common modes.
///
/// The loop wakes for every block posted (a poster always wakes a sleeping loop), and an
/// observer then counts the queue: ``waitUntilQueued()`` is an event, not a poll.
final class ParkedLoop: Sendable {
    /// What the thread does once unparked.
    enum Then: Sendable {
        /// Ends: the loop is torn down with whatever is still queued.
        case exit
        /// Runs `.default` until nothing is left in it, then ends.
        case drain
    }

    let loop: Loop
    private let thread: TestThread
    private let queued = Latch()
    private let then = Lock<Then?>(nil)

    /// Parks a new loop of `backend`; ``waitUntilQueued()`` waits for `count` queued blocks.
    init(_ backend: BackendKind, waitingFor count: Int) throws {
        let made = Lock<Result<Loop, any Error>?>(nil)
        let parked = Latch()
        let (queued, then) = (self.queued, self.then)
        thread = try TestThread {
            let loop: Loop
            do {
                loop = try Loop.current(backend: backend)
            } catch {
                made.withLock { $0 = .failure(error) }
                parked.open()
                return
            }
            let keepAlive = Loop.Source {}
            loop.add(keepAlive, to: "parked")
            let observer = Loop.Observer(activities: [.beforeWaiting, .afterWaiting]) { _, activity in
                if activity == .beforeWaiting { parked.open() }
                if loop.queuedBlockCount >= count { queued.open() }
            }
            loop.add(observer, to: "parked")
            made.withLock { $0 = .success(loop) }
            loop.run("parked", timeout: generousDeadline)
            observer.invalidate()
            keepAlive.invalidate()
            if then.withLock({ $0 }) == .drain { loop.run(.default, timeout: generousDeadline) }
        }
        guard parked.wait(for: generousDeadline), let result = made.withLock({ $0 }) else {
            throw TestTimeout()
        }
        loop = try result.get()
    }

    /// Waits, off the cooperative pool, until the parked loop saw the blocks queued.
    func waitUntilQueued() async -> Bool { await queued.waitOffPool() }

    /// Unparks the loop; it does `next`, and the thread ends.
    func unpark(_ next: Then) {
        then.withLock { $0 = next }
        loop.stop()
    }

    /// Waits, off the cooperative pool, until the thread ended (its loop torn down).
    func join() async -> Bool {
        let thread = self.thread
        return (try? await offThePool { thread.join() }) == true
    }
}

/// Runs `body`, recording a failure if it has not returned within ``generousDeadline``: it is
/// then cancelled (a `submit` that hung answers cancellation at once) and this throws. A task
/// `body` awaits is not cancelled with it: use ``resultWithinDeadline(_:of:sourceLocation:)``.
func withinDeadline<T: Sendable>(
    _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try? await Task.sleep(for: generousDeadline)
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        guard let first else {
            Issue.record("\(what) did not finish within \(generousDeadline)", sourceLocation: sourceLocation)
            throw TestTimeout()
        }
        return first
    }
}

/// `task`'s result, recording a failure if it has not finished within ``generousDeadline``: the
/// task is then cancelled (a hung `submit` answers cancellation at once) and this throws.
func resultWithinDeadline<Success: Sendable, Failure: Error>(
    _ what: String, of task: Task<Success, Failure>, sourceLocation: SourceLocation = #_sourceLocation
) async throws -> Result<Success, Failure> {
    try await withinDeadline(what, sourceLocation: sourceLocation) {
        await withTaskCancellationHandler {
            await task.result
        } onCancel: {
            task.cancel()
        }
    }
}
