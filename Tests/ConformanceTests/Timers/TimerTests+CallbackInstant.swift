import RunLoopKit
import TestSupport
import Testing

/// Objects › Timer: set inside the callback, a next fire instant later than the instant being
/// served replaces the automatic advance, even when it is earlier than the advance.
extension TimerTests {
    @Test(
        "a next instant set inside the callback, earlier than the advance but later than the served instant, wins",
        arguments: backends)
    func setInsideCallbackEarlierThanAdvance(_ backend: BackendKind) async throws {
        let instants = try await servedInstants(backend, repeating: .seconds(20), setLaterBy: .milliseconds(300))
        let gap = instants.count == 2 ? instants[1] - instants[0] : nil
        // 300 ms after the first instant, or later if the callback itself ran late (a past
        // instant means now) — never the 20 s advance.
        #expect(gap.map { $0 >= .milliseconds(300) && $0 < .seconds(20) } == true)
    }

    /// The instants a timer repeating every `interval` serves when its first callback sets its
    /// next instant `later` after the one being served (its second invalidates it).
    func servedInstants(
        _ backend: BackendKind, repeating interval: Duration, setLaterBy later: Duration
    ) async throws -> [ContinuousClock.Instant] {
        try await onLoopThread(backend) { loop in
            let served = Lock<[ContinuousClock.Instant]>([])
            let timer = try Loop.Timer(after: .zero, repeating: interval) { timer in
                let count = served.withLock {
                    $0.append(timer.nextFireInstant)
                    return $0.count
                }
                if count == 1 { timer.nextFireInstant = timer.nextFireInstant + later }
                if count == 2 { timer.invalidate() }
            }
            loop.add(timer, to: .default)
            loop.run(timeout: generousDeadline)
            return served.withLock { $0 }
        }
    }
}
