/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, well-mixed seeded generator.
///
/// Every random gap, delay and phase in the harness comes from one of these, seeded from
/// `--seed`, and is drawn *before* the subjects run: every subject sees the same sequence, so
/// differences between subjects are not differences between draws.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` values uniform in `range`, for a scenario; `stream` separates the scenarios'
    /// sequences so that changing one scenario's sample count leaves the others' draws alone.
    static func draws(_ count: Int, in range: ClosedRange<UInt64>, seed: UInt64, stream: UInt64) -> [UInt64] {
        var generator = SplitMix64(seed: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        return (0..<count).map { _ in UInt64.random(in: range, using: &generator) }
    }
}
