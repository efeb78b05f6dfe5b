import DequeModule
import Synchronization

/// The blocks queued by `perform`, behind their own lock so that posting a block never
/// contends with the loop's state lock (lock order: the loop's state, then this).
final class BlockQueue: Sendable {
    private let blocks = Lock<(queue: Deque<PendingBlock>, closed: Bool)>(([], false))

    /// Appends `block`; false once the loop was torn down.
    func append(_ block: PendingBlock) -> Bool {
        blocks.withLock { blocks in
            guard !blocks.closed else { return false }
            blocks.queue.append(block)
            return true
        }
    }

    /// Swaps the queue with `batch` (empty); false when nothing was queued.
    func takeAll(into batch: inout Deque<PendingBlock>) -> Bool {
        blocks.withLock { blocks in
            guard !blocks.queue.isEmpty else { return false }
            swap(&batch, &blocks.queue)
            return true
        }
    }

    /// Puts blocks that did not run back at the front, ahead of those queued since.
    func prepend(_ kept: Deque<PendingBlock>) {
        blocks.withLock { $0.queue.prepend(contentsOf: kept) }
    }

    /// Whether a queued block runs in `mode`, given the common modes.
    func hasBlock(runningIn mode: Loop.Mode, commonModes: Set<Loop.Mode>) -> Bool {
        blocks.withLock { blocks in
            blocks.queue.contains { $0.runs(in: mode, commonModes: commonModes) }
        }
    }

    /// Refuses further blocks and returns what was queued, to be released by the caller.
    func close() -> Deque<PendingBlock> {
        blocks.withLock { blocks in
            blocks.closed = true
            defer { blocks.queue = [] }
            return blocks.queue
        }
    }
}

/// Whether the loop sleeps, and whether a wake was already sent for this sleep: atomics, so a
/// block poster can decide to wake without the loop's state lock.
///
/// The loop publishes `sleeping` before its last look at the queues, and a poster publishes its
/// work before reading `sleeping` (both sequentially consistent, with a fence on the block
/// path), so either the loop sees the work or the poster sees the loop asleep and wakes it.
final class SleepFlags: Sendable {
    let sleeping = Atomic<Bool>(false)
    let wakePosted = Atomic<Bool>(false)

    /// True when the caller must call the waker: the loop sleeps and no wake was sent yet.
    func claimWake() -> Bool {
        guard sleeping.load(ordering: .sequentiallyConsistent) else { return false }
        return !wakePosted.exchange(true, ordering: .acquiringAndReleasing)
    }
}

extension PendingBlock {
    /// Whether this block runs while the loop runs `mode`.
    func runs(in mode: Loop.Mode, commonModes: Set<Loop.Mode>) -> Bool {
        switch modes {
        case .common: commonModes.contains(mode)
        case let .some(modes): modes.contains(mode) || (modes.contains(.common) && commonModes.contains(mode))
        }
    }
}
