/// Which modes a queued block runs in.
enum BlockModes {
    /// The common modes at the time the block is drained.
    case common
    /// The modes whose numbers are the set bits (``Mode/common``'s bit stands for the common
    /// modes at the time the block is drained): every mode of a program that uses fewer than
    /// 64 modes. A post tests and a drain matches a block with a mask, not a hash.
    case mask(UInt64)
    /// Modes beyond the mask's reach.
    case some(Set<Loop.Mode>)

    /// `modes`, as a mask when every mode fits in one.
    init(_ modes: Loop.ModeSet) {
        guard modes.others.isEmpty else {
            self = .some(Set(modes.modes))
            return
        }
        self = modes.mask == Loop.Mode.common.bit ? .common : .mask(modes.mask)
    }
}

extension Loop.Mode {
    /// The mode's bit in a ``BlockModes/mask(_:)``, if its number has one.
    var bit: UInt64? { index < 64 ? 1 << UInt64(index) : nil }
}

/// A block queued by ``Loop/perform(in:_:)``.
struct PendingBlock {
    let modes: BlockModes
    /// The work. A caller that must learn when a block is dropped without running (the loop
    /// torn down with it still queued) has the closure capture an object whose `deinit` tells
    /// it (`LoopThread`'s waiting `perform`): every queued block costs two words, not a third
    /// for a handler almost none has.
    let body: @Sendable () -> Void
}
