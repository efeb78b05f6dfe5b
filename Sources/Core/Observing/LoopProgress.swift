import Synchronization

/// What a loop's thread is doing now, published for ``StallMonitor``s: the loop writes (through
/// its ``PassInstruments``), any number of watchdogs read.
///
/// The loop's work is cut into *stretches*: one begins when a run starts, after every wait (a
/// sleep or a poll) and when a nested run returns, and the loop going to sleep or leaving its
/// outermost run begins an idle one. A stretch that lasts longer than a monitor's threshold is
/// a stall. Where a stretch is cut the loop has read the clock anyway (to count its time awake
/// and asleep), except after a poll: there it reads the clock only while a monitor watches.
/// Unwatched, publishing costs a few plain stores per pass.
///
/// ``word`` says which stretch and where in it the loop is:
///
/// | bits | what |
/// | --- | --- |
/// | 8–63 | the stretch's number, bumped whenever one begins |
/// | 7 | ``since`` holds the stretch's start (a monitor was watching when it began) |
/// | 4–6 | the ``Loop/CalloutKind`` under way; 0: the loop's own code |
/// | 0–3 | the ``Loop/PassPhase``; 0: idle (not running, or asleep) |
///
/// The loop stores ``since`` before ``word`` (releasing), so a monitor that loads the word
/// (acquiring) then ``since`` reads that stretch's start or a later one's: a stall can look
/// shorter than it is, never longer.
final class LoopProgress: Sendable {
    let word = Atomic<UInt64>(0)
    /// When the stretch began, in ``Nanoseconds/now()``.
    let since = Atomic<Int64>(0)
    /// How many stall monitors watch the loop: with none, the loop publishes no times.
    let monitors = Atomic<Int>(0)

    static let stampedBit: UInt64 = 0x80

    /// A word taken apart.
    struct Reading: Equatable {
        let stretch: UInt64
        /// `nil`: idle.
        let phase: Loop.PassPhase?
        let callout: Loop.CalloutKind?
        /// Whether ``LoopProgress/since`` holds this stretch's start.
        let isStamped: Bool

        init(_ word: UInt64) {
            stretch = word >> 8
            phase = Loop.PassPhase(rawValue: UInt8(word & 0x0F))
            callout = Loop.CalloutKind(rawValue: UInt8((word >> 4) & 0x07))
            isStamped = word & LoopProgress.stampedBit != 0
        }
    }
}

extension Loop {
    /// Where in a pass the loop is, as the low byte of ``LoopProgress/word``.
    static func place(_ phase: PassPhase?, _ callout: CalloutKind? = nil) -> UInt8 {
        (phase?.rawValue ?? 0) | (callout.map { $0.rawValue << 4 } ?? 0)
    }
}
