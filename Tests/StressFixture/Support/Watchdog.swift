import Glibc
import Synchronization
import TestSupport

/// Ends the program when its scenario stops making progress.
///
/// A scenario hung on a lost wakeup would otherwise wait until the test that started it gives
/// up on the whole program. The scenario calls ``beat()`` whenever it makes progress; if no
/// beat comes for `patience`, the watchdog says so on standard error and exits with status 70.
final class Watchdog: Sendable {
    private let beats = Atomic<Int>(0)
    private let stopped = Latch()

    init(_ what: String, patience: Duration = generousDeadline) throws {
        _ = try TestThread { [self] in
            var last = -1
            var quietSince = ContinuousClock.now
            while !self.stopped.wait(for: .seconds(1)) {
                let now = self.beats.load(ordering: .relaxed)
                if now != last {
                    (last, quietSince) = (now, ContinuousClock.now)
                } else if ContinuousClock.now - quietSince > patience {
                    writeLine("FAILED (watchdog): \(what) made no progress for \(patience) (\(now) beats)", to: 2)
                    _exit(70)
                }
            }
        }
    }

    /// Records progress. Safe from any thread.
    func beat() { beats.add(1, ordering: .relaxed) }

    /// Stops watching.
    func stop() { stopped.open() }
}
