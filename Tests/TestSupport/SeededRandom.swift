/// A seeded generator, so that every run of a test makes the same choices: a 64-bit linear
/// congruential generator (Knuth's MMIX constants). Its high bits are the random ones: take
/// choices from them (`next() >> 60`, ``below(_:)``), never from the low bits.
public struct SeededRandom {
    private var state: UInt64

    public init(_ seed: UInt64) { state = seed }

    /// The next state: the first is `seed` stepped once.
    public mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }

    /// A number in `0..<bound`.
    public mutating func below(_ bound: Int) -> Int { Int((next() >> 33) % UInt64(bound)) }
}
