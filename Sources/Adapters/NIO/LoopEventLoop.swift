import Glibc
import NIOCore
import RunLoopKit

/// A RunLoopKit loop as a SwiftNIO `EventLoop`: NIO futures, promises and scheduled tasks
/// served on the loop's thread, in its common modes.
///
/// Get one with ``RunLoopCore/Loop/eventLoop``; there is one per loop, always the same object
/// while any reference to it lives, because NIO tells loops apart by identity
/// (`future.hop(to:)` compares with `===`):
///
/// ```swift
/// let answer = try await client.fetch().hop(to: Loop.main.eventLoop).get()
/// ```
///
/// Work given to it (``execute(_:)``, ``submit(_:)``, a future's callbacks, a scheduled task)
/// runs as a loop block or timer in the common modes, so it waits while the loop runs a
/// nested run in another mode. Scheduled tasks run on loop timers, never before their
/// `NIODeadline`. The adapter does not own the loop: ``shutdownGracefully(queue:_:)`` fails
/// with `EventLoopError.unsupportedOperation`. When the loop's thread ends, nothing waits for
/// ever: pending scheduled tasks fail with `EventLoopError.shutdown`, a ``submit(_:)`` whose
/// block was dropped fails with it too, and the other work it had been given runs once the
/// loop has ended, one task at a time (see <doc:UsingRunLoopKitWithSwiftNIO>).
public final class LoopEventLoop: EventLoop, LoopAttachment, CustomStringConvertible {
    /// The loop this adapter serves work on.
    ///
    /// Held strongly: the loop holds its adapter only weakly (no cycle), and an adapter's
    /// hot paths never pay for a weak load.
    public let loop: Loop

    /// What outlives the loop's thread: the scheduled tasks not yet run (the work that reached
    /// the loop too late goes to the ended loop's executor).
    let afterEnd: AfterEnd
    /// NIO's time on this loop: the real clock, or a virtual loop's own (see ``DeadlineClock``).
    let deadlines: DeadlineClock

    init(loop: Loop) {
        self.loop = loop
        afterEnd = AfterEnd(loop: loop)
        deadlines = DeadlineClock(loop: loop)
    }

    /// The current time as this event loop's deadlines count it: `NIODeadline.now()`; on a
    /// loop on virtual time (`RunLoopKitTesting`'s `VirtualLoop`), the loop's time, counted from
    /// when that loop was made, as an `EmbeddedEventLoop`'s counts from zero. Safe to read from
    /// any thread.
    public var now: NIODeadline { deadlines.now }

    /// The adapter and its loop, for messages: `LoopEventLoop(Loop(epoll, main))`.
    public var description: String { "LoopEventLoop(\(loop))" }

    // MARK: - Where code runs

    /// Whether the calling thread holds this event loop: it is the loop's own thread, or,
    /// once the loop has ended, the thread running the ended loop's executor's work (the work
    /// that reached the loop too late, and the Swift jobs it dropped).
    public var inEventLoop: Bool {
        loop.isOnOwnThread || afterEnd.isServing
    }

    /// Traps, naming the loop, unless called where ``inEventLoop`` holds.
    ///
    /// The message is kept in release builds. Called on the adapter's own type, the form without
    /// arguments is this one; through `any EventLoop` it is NIOCore's, whose `precondition`
    /// prints no message in a release build.
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        trap(unless: inEventLoop, "expected to run on \(loop)'s thread (its NIO event loop)", file: file, line: line)
    }

    /// Traps, naming the loop, if called where ``inEventLoop`` holds; the message is kept in
    /// release builds, as ``preconditionInEventLoop(file:line:)``'s is.
    public func preconditionNotInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        trap(
            unless: !inEventLoop, "expected not to run on \(loop)'s thread (its NIO event loop)", file: file, line: line
        )
    }

    // MARK: - Immediate work

    /// Runs `task` on the loop's thread in its common modes, after the work given before it.
    ///
    /// Safe to call from any thread. Work that the loop drops because its thread ended (it
    /// was still queued, or it came later) is not lost: it runs once the loop has ended, on the
    /// executor that stands for the ended loop (a thread of Dispatch's pool, never inline in
    /// this call), in the order it came, one task at a time, with ``inEventLoop`` true for it
    /// (as NIO's own loops run their remaining tasks when they shut down); a task may be a
    /// promise's completion, and dropping one would leave its future waiting for ever.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let job = LoopJob(task, dropped: afterEnd)
        // A block for the common modes, FIFO with every other block (rules B1, B2).
        loop.perform { job.run() }
    }

    /// Runs `task` on the loop's thread in its common modes and completes the future with
    /// its result.
    ///
    /// If the loop drops the block because its thread ended, `task` does not run and the
    /// future fails with `EventLoopError.shutdown`.
    public func submit<T>(_ task: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        let promise = makePromise(of: T.self)
        let job = LoopJob(
            {
                // Unchecked isolation is sound here: the job runs where `inEventLoop` holds.
                promise.assumeIsolatedUnsafeUnchecked().completeWith(Result(catching: task))
            },
            dropped: afterEnd,
            onDrop: { promise.fail(EventLoopError.shutdown) })
        loop.perform { job.run() }
        return promise.futureResult
    }

    // MARK: - Executor

    /// The loop itself: actors isolated to the loop and to its event loop share one executor,
    /// so code moves between them without a hop.
    public var executor: any SerialExecutor { loop }

    /// Runs `job` on the loop (`Loop.enqueue(_:)`: a block in the common modes).
    public func enqueue(_ job: consuming ExecutorJob) {
        loop.enqueue(job)
    }

    // MARK: - LoopAttachment

    /// Has the ended loop's executor fail the pending scheduled tasks with
    /// `EventLoopError.shutdown`, after the work the loop dropped; work given to the adapter
    /// from now on is served there too.
    package func loopDidEnd() {
        afterEnd.end()
    }
}
