import RunLoopKit
import TestSupport

/// How much a stress run does; every count scales with `RUNLOOPKIT_STRESS_SCALE`.
struct StressPlan: Sendable {
    let producers = 4
    /// Blocks each producer posts (1,000,000 at full scale).
    let blocksPerProducer: Int
    /// Every this many blocks a producer also sends a port message…
    let messageEvery = 16
    /// …and signals its version-0 source.
    let signalEvery = 64
    /// Every this many blocks producer 0 posts a block that runs the loop in another mode.
    let nestedEvery = 4_096
    /// How far a producer may run ahead of the loop. Without a bound, four producers outrun
    /// one loop by millions of blocks; with it, the loop keeps catching up and falling asleep,
    /// so posts also race with the loop's sleep decision (the wake path), not only with a busy
    /// drain.
    let window = 4_096

    init(scale: Double = stressScale) {
        blocksPerProducer = max(2_000, Int((1_000_000 * scale).rounded()))
    }

    var messagesPerProducer: Int { blocksPerProducer / messageEvery }

    /// The value each producer stores with its last signal.
    var finalSignal: Int { blocksPerProducer }

    /// The mode the nested runs use: not common, so the producers' blocks do not run there.
    static let nestedMode: Loop.Mode = "stress.nested"
}
