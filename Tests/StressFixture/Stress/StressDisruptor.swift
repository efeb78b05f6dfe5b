import Glibc
import RunLoopKit

/// A thread that keeps calling `wakeUp()` and `stop()` on the loop until the producers are
/// done: wakes that end a sleep for nothing, and runs (outer or nested) ended at any moment.
struct StressDisruptor: Sendable {
    let loop: Loop
    let shared: StressShared

    /// - Returns: how many stops it sent.
    func run() -> Int {
        var round = 0
        var stops = 0
        while !shared.isWindingDown {
            loop.wakeUp()
            if round % 3 == 0 {
                loop.stop()
                stops += 1
            }
            round += 1
            var pause = timespec(tv_sec: 0, tv_nsec: 100_000)
            nanosleep(&pause, nil)
        }
        return stops
    }
}
