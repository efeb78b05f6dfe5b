import Dispatch
import RunLoopKit
import TestSupport

/// A thread that makes its loop, reports how that went, and then holds it (the thread stays
/// alive, so the loop does too) until released; joining it tears the loop down.
final class ParkedLoopThread: Sendable {
    private let outcome = Lock<Result<Loop, any Error>?>(nil)
    private let made = Latch()
    private let release = DispatchSemaphore(value: 0)
    private let thread: TestThread

    /// Starts the thread and waits until it made its loop or failed to.
    init(_ backend: BackendKind) throws {
        let (outcome, made, release) = (self.outcome, self.made, self.release)
        thread = try TestThread {
            let result = Result { try Loop.current(backend: backend) }
            outcome.withLock { $0 = result }
            made.open()
            if case .success = result { release.wait() }
        }
        made.wait()
    }

    /// The loop, or the error that creating it threw.
    var result: Result<Loop, any Error> { outcome.withLock { $0! } }

    /// Lets the thread exit and waits until it did (its loop torn down).
    func finish() {
        outcome.withLock { $0 = nil }
        release.signal()
        thread.join()
    }
}
