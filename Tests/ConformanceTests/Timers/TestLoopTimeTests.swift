import Glibc
import RunLoopKit
import TestSupport
import Testing

/// The run on virtual time really is on virtual time: a check that the loops
/// ``onLoopThread(_:within:fileID:line:_:)`` makes read the clock this run asked for, so the
/// second run cannot quietly repeat the first (see `VirtualTimeRun.swift`).
@Suite("Test loops run on the time the run asked for")
struct TestLoopTimeTests {
    /// Whether this process was asked for virtual time, read here, apart from `TestLoopTime`.
    static let virtualRequested = getenv("RUNLOOPKIT_TEST_TIME").map { String(cString: $0) } == "virtual"

    @Test("a test loop reads the real clock, or on virtual time passes an hour's timeout at once", arguments: backends)
    func loopsReadTheRequestedClock(_ backend: BackendKind) async throws {
        let outcome = try await onLoopThread(backend) {
            loop -> (readsRealTime: Bool, ran: Duration?, took: Duration?) in
            let readsRealTime = loop.clock.readsRealTime
            // An hour's run only on virtual time: on the real clock it would take an hour.
            if !Self.virtualRequested || readsRealTime { return (readsRealTime, nil, nil) }
            let keepAlive = Loop.Source {}
            loop.add(keepAlive, to: .default)
            defer { keepAlive.invalidate() }
            let (start, realStart) = (loop.now, ContinuousClock.now)
            #expect(loop.run(timeout: .seconds(3600)) == .timedOut)
            return (readsRealTime, loop.now - start, ContinuousClock.now - realStart)
        }
        #expect(outcome.readsRealTime == !Self.virtualRequested)
        if Self.virtualRequested {
            let ran = try #require(outcome.ran)
            #expect(ran >= .seconds(3600) && ran < .seconds(3600) + .milliseconds(1))
            #expect(try #require(outcome.took) < .seconds(60), "an hour of virtual time took real time")
        }
    }
}
