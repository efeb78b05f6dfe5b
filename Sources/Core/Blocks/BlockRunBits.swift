/// What a set of queued blocks has in common about the modes they run in, kept as they are
/// queued so that a drain can tell without looking at each block.
///
/// A block's run bits are its mode mask (``BlockModes/mask(_:)``), or ``Loop/Mode/common``'s
/// bit for a common-modes block; a block whose modes are beyond the mask (``BlockModes/some(_:)``)
/// has none that can be trusted. Removing blocks never invalidates a summary: every block that
/// remains still has the bits of the intersection and none outside the union.
struct BlockRunBits {
    /// The bits every block has (all ones for no block).
    private(set) var all: UInt64 = ~0
    /// The bits some block has.
    private(set) var any: UInt64 = 0
    /// Some block names modes beyond the mask: only looking at it tells where it runs.
    private(set) var hasUnmasked = false

    mutating func add(_ modes: BlockModes) {
        switch modes {
        case .common:
            all &= Loop.Mode.common.bit!
            any |= Loop.Mode.common.bit!
        case let .mask(mask):
            all &= mask
            any |= mask
        case .some:
            all = 0
            hasUnmasked = true
        }
    }

    /// Forgets every block (the set is empty).
    mutating func reset() { self = BlockRunBits() }

    /// Whether every block runs in `mode`, given whether it is common.
    func allRun(in mode: Loop.Mode, modeIsCommon: Bool) -> Bool {
        Self.matches(all, mode, modeIsCommon)
    }

    /// Whether some block may run in `mode`, given whether it is common (false: none does).
    func someMayRun(in mode: Loop.Mode, modeIsCommon: Bool) -> Bool {
        hasUnmasked || Self.matches(any, mode, modeIsCommon)
    }

    private static func matches(_ bits: UInt64, _ mode: Loop.Mode, _ modeIsCommon: Bool) -> Bool {
        bits & (mode.bit ?? 0) != 0 || (modeIsCommon && bits & Loop.Mode.common.bit! != 0)
    }
}
