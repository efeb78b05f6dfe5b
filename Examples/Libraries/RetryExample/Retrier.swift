import RunLoopKit
import Synchronization

/// Runs an operation on a loop until it succeeds, waiting a growing, jittered delay
/// (``Backoff``) after each failure, for at most `maxAttempts` attempts.
///
/// The operation is asynchronous in the loop's way: it is called on the loop's thread with the
/// attempt's number and a `report` closure, starts its work (a request, a connection) and
/// returns; whoever finishes the work calls `report` once, from any thread. A report is handled
/// on the loop: after a failure, the next attempt is a one-shot timer on the loop, the back-off's
/// delay later; after a success, or the last attempt's failure, `completion` runs, once.
///
/// ```swift
/// let fetch = try Retrier<Data>(
///     on: loop, maxAttempts: 8, backoff: Backoff(base: .milliseconds(200), cap: .seconds(30))
/// ) { attempt, report in
///     client.get(url) { report($0) }  // a Result<Data, any Error>, from any thread
/// } completion: { result in
///     print(result)  // on the loop
/// }
/// fetch.start()
/// ```
///
/// The jitter is drawn from the generator given (`SystemRandomNumberGenerator` by default); a
/// test passes a seeded one and computes each delay. Time is the loop's: each back-off is
/// `Loop.perform(after:in:_:)`, so on a `VirtualLoop` it follows the test's virtual time.
///
/// Thread safety: ``start()``, ``cancel()`` and ``isFinished`` are safe from any thread, and so is
/// `report`. The operation and `completion` run on the loop's thread, in `mode`, with no lock
/// held. Only an attempt's first report counts; later ones, and reports after ``cancel()``, are
/// ignored. Once ``cancel()`` returns, no attempt begins and `completion` does not begin, unless
/// the retrier had finished before (an operation or a completion already running on the loop's
/// thread runs to its end). Dropping the last reference to the retrier cancels it.
public final class Retrier<Value: Sendable>: Sendable {
    /// The work to retry: called on the loop's thread with the attempt's number (from 1) and the
    /// closure to report its outcome with, once, from any thread.
    public typealias Operation =
        @Sendable (_ attempt: Int, _ report: @escaping @Sendable (Result<Value, any Error>) -> Void) -> Void

    private enum Phase {
        case idle
        /// Attempt `n` runs: its operation was called and has not reported.
        case attempting(Int)
        /// Waiting out the back-off before attempt `n`.
        case waiting(Int, Loop.Timer)
        case finished
        case cancelled
    }

    /// Only under ``state``'s lock.
    private struct State {
        var phase = Phase.idle
        var generator: any RandomNumberGenerator & Sendable
    }

    /// The loop the operation and the completion run on.
    public let loop: Loop
    /// The most attempts made, the first included.
    public let maxAttempts: Int
    /// The delays between attempts.
    public let backoff: Backoff
    private let mode: Loop.Mode
    private let operation: Operation
    private let completion: @Sendable (Result<Value, RetryFailure>) -> Void
    // The loop takes none of this lock while holding its own, and runs callbacks with no lock
    // held: arming and invalidating the loop's timers under it cannot deadlock.
    private let state: Mutex<State>

    /// Makes a retrier of `operation` on `loop`; ``start()`` begins the first attempt.
    ///
    /// - Parameters:
    ///   - loop: where the operation, the back-off timers and the completion run.
    ///   - maxAttempts: the most attempts, the first included; at least 1.
    ///   - backoff: the delay before each retry.
    ///   - generator: where the jitter's random numbers come from.
    ///   - mode: the loop's mode the operation and the completion run in (`.common`: any common
    ///     mode).
    ///   - operation: the work; see ``Operation``.
    ///   - completion: the outcome, on the loop's thread, once: the first success's value, or
    ///     ``RetryFailure`` after the last attempt failed.
    /// - Throws: `ArgumentError` naming `maxAttempts` when below 1.
    public init(
        on loop: Loop, maxAttempts: Int, backoff: Backoff,
        generator: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        in mode: Loop.Mode = .common,
        operation: @escaping Operation,
        completion: @escaping @Sendable (Result<Value, RetryFailure>) -> Void
    ) throws(ArgumentError) {
        guard maxAttempts >= 1 else {
            throw ArgumentError(
                argument: "maxAttempts", value: "\(maxAttempts)", reason: "at least one attempt must be made")
        }
        self.loop = loop
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.mode = mode
        self.operation = operation
        self.completion = completion
        state = Mutex(State(generator: generator))
    }

    deinit {
        cancel()
    }

    /// Begins the first attempt, on the loop's thread as soon as it runs `mode`.
    /// Calls after the first do nothing.
    ///
    /// Safe from any thread.
    public func start() {
        let starts = state.withLock { state in
            guard case .idle = state.phase else { return false }
            state.phase = .attempting(1)
            return true
        }
        if starts { loop.perform(in: [mode]) { [weak self] in self?.attempt(1) } }
    }

    /// Stops retrying: no attempt begins and the completion does not run.
    ///
    /// Safe from any thread; an operation already running on the loop's thread runs to its end,
    /// and its report is ignored. Does nothing once finished.
    public func cancel() {
        state.withLock { state in
            switch state.phase {
            case .finished, .cancelled: return
            case let .waiting(_, timer): timer.invalidate()
            case .idle, .attempting: break
            }
            state.phase = .cancelled
        }
    }

    /// Whether the retrier finished (its completion ran, or is about to): an attempt succeeded, or
    /// the last one failed.
    ///
    /// Safe from any thread.
    public var isFinished: Bool {
        state.withLock { state in
            if case .finished = state.phase { return true }
            return false
        }
    }

    /// On the loop: runs attempt `number`, unless cancelled meanwhile.
    private func attempt(_ number: Int) {
        let runs = state.withLock { state in
            switch state.phase {
            case .attempting(number): return true
            case .waiting(number, _):
                state.phase = .attempting(number)
                return true
            default: return false
            }
        }
        guard runs else { return }
        operation(number) { [weak self] result in
            // Handled on the loop, whichever thread reports: the state moves, and the completion
            // runs, there only.
            guard let self else { return }
            loop.perform(in: [mode]) { [weak self] in self?.attemptEnded(number, with: result) }
        }
    }

    /// On the loop: attempt `number` reported `result`.
    private func attemptEnded(_ number: Int, with result: Result<Value, any Error>) {
        let outcome: Result<Value, RetryFailure>? = state.withLock { state in
            guard case .attempting(number) = state.phase else { return nil } // a late or second report
            switch result {
            case let .success(value):
                state.phase = .finished
                return .success(value)
            case let .failure(error) where number >= maxAttempts:
                state.phase = .finished
                return .failure(RetryFailure(attempts: number, lastError: error))
            case .failure:
                let delay = backoff.delay(afterFailures: number, using: &state.generator)
                let timer = loop.perform(after: delay, in: [mode]) { [weak self] in self?.attempt(number + 1) }
                state.phase = .waiting(number + 1, timer)
                return nil
            }
        }
        if let outcome { completion(outcome) }
    }
}

/// Why a ``Retrier`` gave up: its last attempt failed.
public struct RetryFailure: Error {
    /// How many attempts were made (the retrier's `maxAttempts`).
    public let attempts: Int
    /// What the last attempt reported.
    public let lastError: any Error
}
