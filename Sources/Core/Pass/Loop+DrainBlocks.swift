extension Loop {
    /// Runs the blocks queued for `mode` before this drain; blocks for other modes stay queued
    /// in order, and blocks that arrive once the drain is under way wait for a later one [B3].
    ///
    /// Blocks are taken from the shared queue (the whole queue at once when all of them run
    /// here, otherwise in runs of one lock each; see
    /// ``BlockQueue/take(runningIn:modeIsCommon:notAfter:into:)``) into
    /// ``ThreadLocalState/takenBlocks`` and run from there, oldest first: a run nested in a
    /// block finds the blocks this drain took and has not reached before those still queued,
    /// and may run them [B4].
    ///
    /// The drain is under way from its first take or its first block, whichever comes first:
    /// its limit (the newest block it may take) is fixed then, under the queue's lock, so a
    /// block another thread queues before that is as good as queued before the drain began,
    /// and one queued by a block of the drain, or after one of them started, waits.
    func drainBlocks(in mode: Mode) {
        let mayTake = blocks.queuedCount > 0
        guard mayTake || !local.takenBlocks.isEmpty else { return }
        publish(.blocks)
        var version = hints.commonModesVersion()
        var modeIsCommon = state.withLock { $0.commonModes.contains(mode) }
        var limit: UInt64?
        while true {
            guard let block = local.takenBlocks.removeFirst(runningIn: mode, modeIsCommon: modeIsCommon) else {
                guard mayTake,
                    blocks.take(runningIn: mode, modeIsCommon: modeIsCommon, notAfter: &limit, into: &local.takenBlocks)
                else {
                    return
                }
                continue
            }
            // A block an enclosing drain took runs before this drain took anything: what this
            // drain may take is what is queued now, before the block can queue more.
            if mayTake, limit == nil { limit = blocks.newestSequence }
            callingOutToBlock(block.body)
            // A block that made a mode common changes which of the next blocks run here.
            let current = hints.commonModesVersion()
            if current != version {
                version = current
                modeIsCommon = state.withLock { $0.commonModes.contains(mode) }
            }
        }
    }
}
