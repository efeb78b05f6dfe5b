extension Loop {
    /// Runs the blocks queued for `mode` before this drain; blocks for other modes stay queued
    /// in order, and blocks queued during the drain wait for a later one.
    ///
    /// Blocks are taken from the shared queue in runs (one lock per run) into
    /// ``ThreadLocalState/takenBlocks`` and run from there, oldest first: a run nested in a
    /// block finds the blocks this drain took and has not reached before those still queued,
    /// and may run them.
    func drainBlocks(in mode: Mode) {
        let limit = blocks.drainLimit()
        guard limit != nil || !local.takenBlocks.isEmpty else { return }
        publish(.blocks)
        var version = commonModesVersion.load(ordering: .acquiring)
        var modeIsCommon = state.withLock { $0.commonModes.contains(mode) }
        while true {
            guard let index = local.takenBlocks.firstIndex(where: { $0.runs(in: mode, modeIsCommon: modeIsCommon) })
            else {
                guard let limit,
                    blocks.take(runningIn: mode, modeIsCommon: modeIsCommon, notAfter: limit, into: &local.takenBlocks)
                else {
                    return
                }
                continue
            }
            let block =
                index == local.takenBlocks.startIndex
                ? local.takenBlocks.removeFirst() : local.takenBlocks.remove(at: index)
            callingOutToBlock(block.body)
            // A block that made a mode common changes which of the next blocks run here.
            let current = commonModesVersion.load(ordering: .acquiring)
            if current != version {
                version = current
                modeIsCommon = state.withLock { $0.commonModes.contains(mode) }
            }
        }
    }
}
