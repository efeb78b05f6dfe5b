import DequeModule
import Synchronization

/// The blocks queued by `perform`, behind their own lock so that posting a block never
/// contends with the loop's state lock (lock order: the loop's state, then this).
///
/// A drain takes blocks one at a time, straight from this queue, up to the newest block that
/// was queued when the drain began. A block that runs the loop again (a nested run) therefore
/// sees every block still waiting, in order: nothing is hidden in a drain's private batch, so
/// FIFO order holds across nesting and a mode with a queued block is never taken for empty.
final class BlockQueue: Sendable {
    private struct Entry {
        /// Increasing in queue order; a drain's limit is a sequence number.
        let sequence: UInt64
        let block: PendingBlock
    }

    private struct Queue {
        var entries: Deque<Entry> = []
        var lastSequence: UInt64 = 0
        var closed = false
        /// Modes known to exist in the loop (and `.common`, which needs no creating). A loop
        /// never drops a mode, so once a block's modes are known here, posting it needs no
        /// look at the loop's state (and no wait for its lock, which a busy loop holds often).
        var knownModes: Set<Loop.Mode> = [.default, .common]
    }

    private let queue = Lock(Queue())
    /// How many blocks are queued, kept with the queue under its lock: a drain that finds
    /// none takes no lock.
    private let count = Atomic<Int>(0)

    /// What ``append(_:)`` did.
    enum Appended {
        /// Queued; every mode it names is known to exist.
        case queued
        /// Queued; these modes were not known to exist: the caller creates them in the loop
        /// if need be, then calls ``noteExisting(_:)``.
        case queuedWithNewModes([Loop.Mode])
        /// Refused: the loop was torn down.
        case refused
    }

    /// Appends `block`.
    func append(_ block: PendingBlock) -> Appended {
        queue.withLock { queue in
            guard !queue.closed else { return .refused }
            queue.lastSequence += 1
            queue.entries.append(Entry(sequence: queue.lastSequence, block: block))
            count.store(queue.entries.count, ordering: .releasing)
            guard case let .some(modes) = block.modes, !queue.knownModes.isSuperset(of: modes) else { return .queued }
            return .queuedWithNewModes(modes.filter { !queue.knownModes.contains($0) })
        }
    }

    /// Records that `modes` exist in the loop.
    func noteExisting(_ modes: [Loop.Mode]) {
        queue.withLock { $0.knownModes.formUnion(modes) }
    }

    /// The limit of a drain that begins now: the newest block's sequence number, or `nil`
    /// when nothing is queued.
    func drainLimit() -> UInt64? {
        guard count.load(ordering: .acquiring) > 0 else { return nil }
        return queue.withLock { $0.entries.isEmpty ? nil : $0.lastSequence }
    }

    /// Removes and returns the oldest block queued no later than `limit` that runs in `mode`;
    /// blocks for other modes keep their places.
    func popFirst(runningIn mode: Loop.Mode, commonModes: Set<Loop.Mode>, notAfter limit: UInt64) -> PendingBlock? {
        queue.withLock { queue in
            var index = queue.entries.startIndex
            while index < queue.entries.endIndex {
                let entry = queue.entries[index]
                guard entry.sequence <= limit else { return nil }
                if entry.block.runs(in: mode, commonModes: commonModes) {
                    defer { count.store(queue.entries.count, ordering: .releasing) }
                    return index == queue.entries.startIndex
                        ? queue.entries.removeFirst().block
                        : queue.entries.remove(at: index).block
                }
                index += 1
            }
            return nil
        }
    }

    /// Whether a queued block runs in `mode`, given the common modes.
    func hasBlock(runningIn mode: Loop.Mode, commonModes: Set<Loop.Mode>) -> Bool {
        queue.withLock { queue in
            queue.entries.contains { $0.block.runs(in: mode, commonModes: commonModes) }
        }
    }

    /// Refuses further blocks and returns what was queued, to be released by the caller
    /// without running (the loop is being torn down).
    func close() -> [PendingBlock] {
        queue.withLock { queue in
            queue.closed = true
            defer {
                queue.entries = []
                count.store(0, ordering: .releasing)
            }
            return queue.entries.map(\.block)
        }
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
