import DequeModule
import Synchronization

/// The blocks queued by `perform`, behind their own lock so that posting a block never
/// contends with the loop's state lock (lock order: the loop's state, then this).
///
/// A drain moves blocks, up to the newest block that was queued when the drain began, into
/// the loop thread's list of taken blocks (``ThreadLocalState/takenBlocks``), and runs them
/// from there. A block that runs the loop again (a nested run) sees the blocks taken and not
/// yet run before those still queued (they are older), so FIFO order holds across nesting and
/// a mode with a block waiting in either place is never taken for empty.
///
/// When every queued block runs in the drain's mode (the usual case: `perform { }` while a
/// common mode runs) the drain takes the whole queue by swapping buffers with it: the lock is
/// held for a constant time however many blocks wait, so a poster seldom finds it taken. A
/// poster that did would sleep in the kernel, and the loop's unlock would have to wake it: the
/// two threads would take turns instead of running side by side (measured: about 14,000 context
/// switches per million blocks when a drain held the lock while it moved blocks one by one).
final class BlockQueue: Sendable {
    private struct Queue {
        var entries: Deque<QueuedBlock> = []
        var lastSequence: UInt64 = 0
        var closed = false
        /// What the queued blocks have in common (reset when the queue empties).
        var runBits = BlockRunBits()
        /// Modes known to exist in the loop (and `.common`, which needs no creating). A loop
        /// never drops a mode, so once a block's modes are known here, posting it needs no
        /// look at the loop's state (and no wait for its lock, which a busy loop holds often).
        var knownModes: Set<Loop.Mode> = [.default, .common]
        /// The same, for modes with a bit: the check a post makes.
        var knownMask: UInt64 = Loop.Mode.default.bit! | Loop.Mode.common.bit!

        /// Records that the entries changed: the count posters and drains read without the
        /// lock, and the summary, which starts again from an empty queue.
        mutating func didChange(_ count: borrowing Atomic<Int>) {
            if entries.isEmpty { runBits.reset() }
            count.store(entries.count, ordering: .releasing)
        }
    }

    /// Held for a few instructions at a time (an append, a swap): a poster that finds it taken
    /// spins briefly instead of sleeping in the kernel and having the loop wake it.
    private let queue = Lock(Queue(), rank: .blockQueue, spinsBeforeSleeping: true)
    /// How many blocks are queued, kept with the queue under its lock: a drain that finds
    /// none takes no lock.
    private let count = Atomic<Int>(0)

    #if DEBUG
    /// For the lock-order tests (debug builds only): runs `body` holding the queue's lock.
    func withLockHeld(_ body: () -> Void) { queue.withLock { _ in body() } }
    #endif

    /// What ``append(_:)`` did.
    enum Appended {
        /// Queued as number `sequence` (for ``remove(sequence:)``); every mode it names is
        /// known to exist.
        case queued(sequence: UInt64)
        /// Queued as number `sequence`; these modes were not known to exist: the caller
        /// creates them in the loop if need be, then calls ``noteExisting(_:)``.
        case queuedWithNewModes([Loop.Mode], sequence: UInt64)
        /// Refused: the loop was torn down, or its last block was queued
        /// (``append(_:sealing:)``).
        case refused
    }

    /// Appends `block`; `sealing` makes it the last block the queue accepts: every later
    /// append is refused, so none can be queued behind a block that ends the loop for good.
    /// `sleepSeen` is `sleep`'s word read under the lock (``SleepGate/seenUnderQueueLock()``),
    /// for the caller to hand to ``SleepGate/wake(seen:)`` [C2].
    func append(
        _ block: consuming PendingBlock, sealing: Bool = false, sleepSeen: inout UInt64, in sleep: SleepGate
    ) -> Appended {
        let modes = block.modes
        // Moved into the queue, not copied: a copy would retain the closure here and release it
        // when the caller's copy goes, two atomic operations per post. A refused block is
        // released when this returns, with the lock let go.
        var moving: PendingBlock? = consume block
        return queue.withLock { queue in
            guard !queue.closed else { return .refused }
            if sealing { queue.closed = true }
            queue.lastSequence += 1
            let sequence = queue.lastSequence
            queue.entries.append(QueuedBlock(sequence: sequence, block: moving.take()!))
            queue.runBits.add(modes)
            count.store(queue.entries.count, ordering: .releasing)
            sleepSeen = sleep.seenUnderQueueLock()
            switch modes {
            case .common:
                return .queued(sequence: sequence)
            case let .mask(mask):
                let unknown = mask & ~queue.knownMask
                guard unknown != 0 else { return .queued(sequence: sequence) }
                return .queuedWithNewModes(
                    (0..<64).filter { unknown & (1 << UInt64($0)) != 0 }.map(Loop.Mode.init(index:)),
                    sequence: sequence)
            case let .some(modes):
                guard !queue.knownModes.isSuperset(of: modes) else { return .queued(sequence: sequence) }
                return .queuedWithNewModes(modes.filter { !queue.knownModes.contains($0) }, sequence: sequence)
            }
        }
    }

    /// Records that `modes` exist in the loop.
    func noteExisting(_ modes: [Loop.Mode]) {
        queue.withLock { queue in
            queue.knownModes.formUnion(modes)
            for mode in modes { queue.knownMask |= mode.bit ?? 0 }
        }
    }

    /// The number of the newest block queued so far (0 before the first): the limit of a
    /// drain that is under way from now.
    var newestSequence: UInt64 {
        queue.withLock { $0.lastSequence }
    }

    /// The most blocks one ``take(runningIn:modeIsCommon:notAfter:into:)`` moves one by one.
    static let batchLimit = 64

    /// Moves blocks queued no later than `limit` that run in `mode` to the end of `taken`; a
    /// `nil` limit (the drain's first take) becomes the newest block's number, under the lock:
    /// - when every queued block up to the limit runs in `mode`, and `taken` is empty, the
    ///   whole queue, by swapping buffers (constant time under the lock);
    /// - otherwise the oldest block that runs in `mode`, and when it was the oldest block of
    ///   all, the blocks right behind it that run in `mode` too (a run of at most
    ///   ``batchLimit``). Blocks for other modes keep their places.
    ///
    /// Blocks behind one for another mode are not taken with it: a block the drain runs may
    /// make `mode` common, and the skipped block may then run in `mode`, before those behind it.
    /// - Returns: whether a block was taken.
    func take(
        runningIn mode: Loop.Mode, modeIsCommon: Bool, notAfter limit: inout UInt64?, into taken: inout TakenBlocks
    ) -> Bool {
        queue.withLock { queue in
            let newest = limit ?? queue.lastSequence
            limit = newest
            guard let oldest = queue.entries.first, oldest.sequence <= newest else { return false }
            if taken.isEmpty, queue.lastSequence <= newest, queue.runBits.allRun(in: mode, modeIsCommon: modeIsCommon) {
                swap(&queue.entries, &taken.entries)
                taken.runBits = queue.runBits
                queue.didChange(count)
                return true
            }
            defer { queue.didChange(count) }
            guard
                let first = queue.entries.firstIndex(where: {
                    $0.sequence > newest || $0.block.runs(in: mode, modeIsCommon: modeIsCommon)
                }),
                queue.entries[first].sequence <= newest
            else { return false }
            guard first == queue.entries.startIndex else {
                taken.append(queue.entries.remove(at: first))
                return true
            }
            var moved = 0
            while moved < BlockQueue.batchLimit, let next = queue.entries.first, next.sequence <= newest,
                next.block.runs(in: mode, modeIsCommon: modeIsCommon)
            {
                taken.append(queue.entries.removeFirst())
                moved += 1
            }
            return true
        }
    }

    /// Whether a queued block runs in `mode`, given the common modes: the loop's last look
    /// before it sleeps, after it published that it sleeps. It always takes the lock, even
    /// when the count reads zero: that is what lets a poster read the gate under the lock with
    /// no fence (see ``SleepGate/seenUnderQueueLock()``) [C2].
    func hasBlockForSleep(runningIn mode: Loop.Mode, commonModes: Set<Loop.Mode>) -> Bool {
        queue.withLock { queue in
            guard !queue.entries.isEmpty else { return false }
            let modeIsCommon = commonModes.contains(mode)
            return queue.entries.contains { $0.block.runs(in: mode, modeIsCommon: modeIsCommon) }
        }
    }

    /// Whether a queued block runs in `mode`, given the common modes.
    func hasBlock(runningIn mode: Loop.Mode, commonModes: Set<Loop.Mode>) -> Bool {
        guard count.load(ordering: .acquiring) > 0 else { return false }
        let modeIsCommon = commonModes.contains(mode)
        return queue.withLock { queue in
            queue.entries.contains { $0.block.runs(in: mode, modeIsCommon: modeIsCommon) }
        }
    }

    /// How many queued blocks run in `mode`, given whether it is common (for a loop's
    /// description; blocks a drain has already taken are not counted).
    func queuedCount(runningIn mode: Loop.Mode, modeIsCommon: Bool) -> Int {
        guard count.load(ordering: .acquiring) > 0 else { return 0 }
        return queue.withLock { queue in
            queue.entries.lazy.filter { $0.block.runs(in: mode, modeIsCommon: modeIsCommon) }.count
        }
    }

    /// How many blocks are queued, for whatever modes.
    var queuedCount: Int { count.load(ordering: .acquiring) }

    /// Takes the block queued as number `sequence` out of the queue and returns it (for the
    /// caller to release with no lock held), or `nil` when it is no longer queued: a drain
    /// took it (it then runs, or is skipped by its own closure) or teardown dropped it.
    ///
    /// Entries stay in sequence order (removals never reorder them), so the search is binary.
    func remove(sequence: UInt64) -> PendingBlock? {
        queue.withLock { queue in
            var low = queue.entries.startIndex
            var high = queue.entries.endIndex
            while low < high {
                let middle = low + (high - low) / 2
                if queue.entries[middle].sequence < sequence { low = middle + 1 } else { high = middle }
            }
            guard low < queue.entries.endIndex, queue.entries[low].sequence == sequence else { return nil }
            defer { queue.didChange(count) }
            return queue.entries.remove(at: low).block
        }
    }

    /// Refuses further blocks and returns what was queued, to be dropped by the caller
    /// without running (the loop is being torn down).
    func close() -> [PendingBlock] {
        queue.withLock { queue in
            queue.closed = true
            defer {
                queue.entries = []
                queue.didChange(count)
            }
            return queue.entries.map(\.block)
        }
    }
}

extension PendingBlock {
    /// Whether this block runs while the loop runs `mode`, given whether `mode` is common.
    func runs(in mode: Loop.Mode, modeIsCommon: Bool) -> Bool {
        switch modes {
        case .common:
            modeIsCommon
        case let .mask(mask):
            mask & (mode.bit ?? 0) != 0 || (modeIsCommon && mask & Loop.Mode.common.bit! != 0)
        case let .some(modes):
            modes.contains(mode) || (modeIsCommon && modes.contains(.common))
        }
    }
}
