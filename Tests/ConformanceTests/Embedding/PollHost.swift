import Glibc
import RunLoopKit
import TestSupport

/// The backends of this build whose loops offer a host descriptor: the embedding tests run on
/// each (a new backend that offers one joins them by itself; one that does not is checked for
/// its typed answer by `EmbeddingTests.descriptorOrTypedAnswer`).
let embeddableBackends: [BackendKind] = backends.filter { kind in
    guard let backend = try? kind.factory.make(), case .descriptor = backend.embedding else { return false }
    return true
}

/// A host event loop as simple as they come: `poll(2)` on the loop's host descriptor, with
/// the loop's timeout, then a dispatch. Used on the loop's own thread only.
final class PollHost {
    let loop: Loop
    let descriptor: Int32
    let mode: Loop.Mode
    /// How many times the host woke and dispatched the loop: for the descriptor, or because
    /// the loop's deadline came (a poll the host itself cut short, at the end of a stretch it
    /// was asked to run, is not counted).
    private(set) var iterations = 0
    /// How many of those were for the descriptor.
    private(set) var readableIterations = 0
    /// The results of the dispatches, in order.
    private(set) var results: [Loop.RunResult] = []

    init(_ loop: Loop, in mode: Loop.Mode = .default) throws {
        self.loop = loop
        self.mode = mode
        descriptor = try loop.hostDescriptor()
    }

    /// How one iteration of the host ended.
    enum Outcome: Equatable {
        /// The descriptor polled readable; the loop was dispatched.
        case readable
        /// The loop's deadline came (or it was ready); the loop was dispatched.
        case deadline
        /// The host's own limit came first: the loop was not dispatched.
        case hostLimit
    }

    /// One iteration: prepare, poll until the loop's deadline or `limit`, dispatch (unless the
    /// host's limit came first; then the next iteration prepares again, which a host may).
    @discardableResult
    func iterate(limit: Duration = generousDeadline) -> Outcome {
        let wait = loop.prepareForHost(in: mode)
        let start = ContinuousClock.now
        while true {
            let loopTimeout = wait.timeoutMilliseconds()
            let hostLeft = limit - (ContinuousClock.now - start)
            let hostTimeout = hostLeft <= .zero ? 0 : Self.milliseconds(roundingUp: hostLeft)
            let (timeout, hostFirst) =
                loopTimeout >= 0 && loopTimeout <= hostTimeout ? (loopTimeout, false) : (hostTimeout, true)
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let polled = poll(&entry, 1, timeout)
            if polled < 0 {
                precondition(errno == EINTR, "poll failed: errno \(errno)")
                continue
            }
            let outcome: Outcome = polled > 0 ? .readable : hostFirst ? .hostLimit : .deadline
            if outcome == .hostLimit { return outcome }
            results.append(loop.dispatchForHost())
            iterations += 1
            if outcome == .readable { readableIterations += 1 }
            return outcome
        }
    }

    /// Iterates until `done` holds after a dispatch; false when `limit` passed first.
    func run(until done: () -> Bool, limit: Duration = generousDeadline) -> Bool {
        let end = ContinuousClock.now + limit
        while !done() {
            let left = end - ContinuousClock.now
            guard left > .zero else { return false }
            iterate(limit: left)
        }
        return true
    }

    /// Iterates for `stretch` (the host's clock), dispatching whenever the loop asks.
    func idle(for stretch: Duration) {
        let end = ContinuousClock.now + stretch
        while ContinuousClock.now < end { iterate(limit: end - ContinuousClock.now) }
    }

    static func milliseconds(roundingUp duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}

/// The CPU time the calling thread has used.
func threadCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
}

/// Runs `body` on a new thread that owns a fresh loop of `kind` (``onLoopThread(_:within:fileID:line:_:)``)
/// with a ``PollHost`` driving it, and returns the body's value.
func onHostedLoop<T: Sendable>(
    _ kind: BackendKind, fileID: String = #fileID, line: Int = #line,
    _ body: @escaping @Sendable (Loop, PollHost) throws -> T
) async throws -> T {
    try await onLoopThread(kind, fileID: fileID, line: line) { loop in try body(loop, try PollHost(loop)) }
}
