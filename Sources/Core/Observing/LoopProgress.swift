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
/// The two fields are full or nearly so (the seven callout kinds take all of theirs): every
/// loop checks as it is made that each case's raw value fits its field and is not 0
/// (``Loop/progressFieldsFit``), so that a case added beyond a field's capacity stops the
/// first loop with a message instead of silently setting a neighbouring bit.
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

    /// The widths of the phase and callout fields (the layout above).
    static var phaseBits: Int { 4 }
    static var calloutBits: Int { 3 }
    static var stampedBit: UInt64 { 1 << UInt64(phaseBits + calloutBits) }

    init() {
        trap(
            unless: Loop.progressFieldsFit,
            "LoopProgress: a PassPhase or CalloutKind case does not fit its \(LoopProgress.phaseBits)- or \(LoopProgress.calloutBits)-bit field; widen the field"
        )
    }

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
            phase = Loop.PassPhase(rawValue: UInt8(word & (1 << LoopProgress.phaseBits - 1)))
            callout = Loop.CalloutKind(
                rawValue: UInt8((word >> LoopProgress.phaseBits) & (1 << LoopProgress.calloutBits - 1)))
            isStamped = word & LoopProgress.stampedBit != 0
        }
    }
}
