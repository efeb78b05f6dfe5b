import DequeModule

/// The blocks a drain took from the ``BlockQueue`` and has not run yet, oldest first: the loop
/// thread's own list (``ThreadLocalState/takenBlocks``).
///
/// A drain may take the whole queue at once, so the list can be long while a block in it
/// runs the loop again in another mode; what the list's blocks have in common
/// (``BlockRunBits``) lets that nested run see at once that none of them is its own, instead
/// of looking at each on every pass.
struct TakenBlocks {
    /// Oldest first. Only ``BlockQueue`` appends, or swaps a whole queue in.
    var entries: Deque<QueuedBlock> = []
    /// A summary of every block in `entries` (some may have run since).
    var runBits = BlockRunBits()

    var isEmpty: Bool { entries.isEmpty }

    /// The oldest block that runs in `mode`, given whether it is common.
    func firstIndex(runningIn mode: Loop.Mode, modeIsCommon: Bool) -> Int? {
        guard let first = entries.first else { return nil }
        // The usual case, checked first: the oldest block runs here.
        if first.block.runs(in: mode, modeIsCommon: modeIsCommon) { return entries.startIndex }
        guard runBits.someMayRun(in: mode, modeIsCommon: modeIsCommon) else { return nil }
        return entries.firstIndex { $0.block.runs(in: mode, modeIsCommon: modeIsCommon) }
    }

    /// Takes out the oldest block that runs in `mode`, given whether it is common, to run it
    /// (one access to the list per block: it is a class's property, checked at each access).
    mutating func removeFirst(runningIn mode: Loop.Mode, modeIsCommon: Bool) -> PendingBlock? {
        firstIndex(runningIn: mode, modeIsCommon: modeIsCommon).map { remove(at: $0) }
    }

    /// Whether a block runs in `mode`, given whether it is common.
    func contains(runningIn mode: Loop.Mode, modeIsCommon: Bool) -> Bool {
        firstIndex(runningIn: mode, modeIsCommon: modeIsCommon) != nil
    }

    /// Appends a block the queue moved here (oldest first).
    mutating func append(_ entry: QueuedBlock) {
        entries.append(entry)
        runBits.add(entry.block.modes)
    }

    /// Takes the block at `index` out, to run it.
    mutating func remove(at index: Int) -> PendingBlock {
        let block = index == entries.startIndex ? entries.removeFirst().block : entries.remove(at: index).block
        if entries.isEmpty { runBits.reset() }
        return block
    }

    /// Drops every block (the loop's thread is ending; the queue has dropped its own).
    mutating func removeAll() {
        entries = []
        runBits.reset()
    }
}
