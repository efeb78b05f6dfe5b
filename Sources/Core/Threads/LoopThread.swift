import Dispatch
import Synchronization

/// A thread whose loop runs until stopped: the "keep-alive thread" of run-loop lore.
///
/// Hand it work with ``perform(waitUntilDone:_:)``; use ``loop`` to add sources, timers and
/// observers, or as an actor's executor. ``stop()`` (or dropping the last reference) ends the
/// loop after every block posted before it has run, and joins the thread (a last reference
/// dropped on the loop's own thread ends the loop the same way and lets the thread finish);
/// from async code, ``finish()`` does the same without blocking the caller's thread.
public final class LoopThread: Sendable {
    /// The thread's loop; safe to use from any thread as ``Loop`` allows.
    public let loop: Loop

    /// The thread, until whoever joins it (``stop()`` or ``finish()``) takes it.
    let thread: Lock<PThread?>
    /// Set (on the loop's thread) by the block that ends the loop.
    private let finished = Flag()
    /// Signalled once the thread was joined (its loop torn down), by whoever joined it.
    let ended = ThreadEndSignal()
    /// Posted blocks are refused once stopping began (`submit` reads it too).
    let stopping = Atomic<Bool>(false)

    /// Starts a thread and its loop, running ``Loop/Mode/default``.
    ///
    /// The loop is made with `factory` on the new thread: a built-in backend's
    /// (`BackendKind.factory` from `RunLoopKit`) or a backend of your own's.
    ///
    /// - Parameters:
    ///   - name: the thread's name (Linux keeps the first 15 bytes).
    ///   - factory: how to make the loop's backend.
    /// - Throws: what `factory` throws; ``SystemError`` when the thread cannot start.
    public convenience init(name: String = "RunLoopKit", backend factory: BackendFactory) throws {
        try self.init(name: name) { try Loop.current(creatingWith: factory) }
    }

    /// Starts a thread whose loop `makeLoop` creates on it, bound to it as its current loop
    /// (RunLoopKitTesting's virtual loops: a loop on a clock of their own).
    package init(name: String, makeLoop: @escaping @Sendable () throws -> Loop) throws {
        let started = Lock<Result<Loop, any Error>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let keepAlive = KeepAlive()
        let finished = self.finished
        let thread = try PThread.spawn(name: name) {
            do {
                let loop = try makeLoop()
                // `stop()`, `perform(waitUntilDone:)` and `deinit` tell the loop's thread by its
                // binding: a loop made for another thread would deadlock them.
                trap(unless: Loop.currentIfBound === loop, "LoopThread: its loop must be bound to its thread")
                // A source that never fires keeps the mode from ever being empty.
                loop.add(keepAlive.source, to: .default)
                started.withLock { $0 = .success(loop) }
                ready.signal()
                while !finished.value.load(ordering: .acquiring) { loop.run(.default) }
                keepAlive.source.invalidate()
            } catch {
                started.withLock { $0 = .failure(error) }
                ready.signal()
            }
        }
        ready.wait()
        switch started.withLock({ $0! }) {
        case let .success(loop):
            self.loop = loop
            self.thread = Lock(thread)
        case let .failure(error):
            thread.join()
            throw error
        }
    }

    deinit {
        // The last reference may go on the loop's own thread (a block that captured this
        // object): it cannot join itself, so it ends the loop and lets the thread go.
        if Loop.currentIfCreated === loop {
            finishLoop()
            thread.withLock { $0.take() }?.detach()
        } else {
            stop()
        }
    }

    /// Queues `block` on the thread's loop (common modes).
    ///
    /// Every call gets an answer: true when the block ran (`waitUntilDone`) or will run
    /// before the loop ends, false when it never will.
    ///
    /// - Parameters:
    ///   - waitUntilDone: return only after the block ran, or once it is certain it never
    ///     will. Called on the loop's own thread, the block runs at once instead (waiting
    ///     would deadlock).
    ///   - block: the work.
    /// - Returns: false, and the block does not run, once ``stop()`` has begun.
    @discardableResult
    public func perform(waitUntilDone: Bool = false, _ block: @escaping @Sendable () -> Void) -> Bool {
        guard !stopping.load(ordering: .acquiring) else { return false }
        guard waitUntilDone else {
            // Refused once the finishing block is queued: a block accepted before it runs
            // before it, so true is never said of a block the end of the loop leaves behind.
            return loop.enqueue(PendingBlock(modes: .common, body: block))
        }
        if Loop.currentIfCreated === loop {
            block()
            return true
        }
        let outcome = WaitedBlock()
        // Answers false when the block is freed without having run: not reached through stop()
        // (blocks accepted before the finishing block run before it), but a teardown that drops
        // the block must still answer.
        let answer = AnswerWhenFreed(outcome)
        let queued = loop.enqueue(
            PendingBlock(modes: .common) {
                block()
                answer.ran()
            })
        return queued && outcome.wait()
    }

    /// Ends the loop once every block posted before this call has run, and joins the thread.
    ///
    /// Later calls, and blocks posted afterwards, have no effect. Must not be called from the
    /// loop's own thread (it would wait for itself); it traps there with a message.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        trap(
            unless: Loop.currentIfCreated !== loop,
            "LoopThread.stop() called on its own thread; it would wait for itself")
        finishLoop()
        if let handle = thread.withLock({ $0.take() }) {
            handle.join()
            ended.signal()
        }
    }

    /// Queues the block that ends the loop as the last block the loop accepts: FIFO, it runs
    /// after every block accepted before it, and a `perform` that lost the race with it is
    /// refused (and returns false) instead of being left behind in the queue.
    func finishLoop() {
        stopping.store(true, ordering: .releasing)
        let finished = self.finished
        let loop = self.loop
        loop.enqueue(
            PendingBlock(
                modes: .common,
                body: {
                    finished.value.store(true, ordering: .releasing)
                    // Every run, not the innermost: a block posted before stop() may be running
                    // a nested run that drains this block, and the outer run must end too.
                    loop.stopAllRuns()
                }),
            sealing: true)
    }
}

/// How a block posted by `perform(waitUntilDone: true)` ended: it ran, or it was dropped.
private final class WaitedBlock: Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// 0 until answered, then 1 (ran) or 2 (dropped): the first answer stands.
    private let answer = Atomic<Int>(0)

    func finish(ran: Bool) {
        guard answer.compareExchange(expected: 0, desired: ran ? 1 : 2, ordering: .acquiringAndReleasing).exchanged
        else { return }
        done.signal()
    }

    /// Waits for ``finish(ran:)``; returns whether the block ran.
    func wait() -> Bool {
        done.wait()
        return answer.load(ordering: .acquiring) == 1
    }
}

/// Held only by a waited block's closure: when the closure is freed, whether after running
/// (the answer is already given) or dropped unrun at teardown, the caller gets its answer.
private final class AnswerWhenFreed: Sendable {
    private let outcome: WaitedBlock

    init(_ outcome: WaitedBlock) { self.outcome = outcome }

    func ran() { outcome.finish(ran: true) }

    deinit { outcome.finish(ran: false) }
}

/// A flag shared with the loop's thread.
private final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}

/// A version-0 source nobody signals: it keeps a mode non-empty.
private struct KeepAlive: Sendable {
    let source = Loop.Source {}
}
