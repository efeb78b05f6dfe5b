import RunLoopKit
import TestSupport
import Testing

/// A run nested in a timer's callback serves the timers the enclosing timer step set aside
/// (behaviour contract, Sources/Core/RunLoopKit.docc/BehaviourContract.md › T1: A past instant means
/// now; N1: Runs nest).
///
/// A timer queued during a timer step waits for a later pass, even when already due; a run
/// nested in a later timer's callback is such a later pass. Before the fix, the nested run
/// planned its sleep without the set-aside entry (an exact timer has no other) and slept its
/// whole timeout: here the nested run would end `timedOut` after ``generousDeadline`` instead
/// of `stopped` by the timer.
extension TimerTests {
    /// How a due timer T comes to join the running mode while M's callback runs.
    enum JoinsDuringStep: String, CaseIterable, CustomTestStringConvertible {
        /// T, in another mode, is added to the running mode.
        case addedToMode = "added to the running mode"
        /// T, in the common modes, gains the running mode when it is made common.
        case modeMadeCommon = "the running mode made common"

        var testDescription: String { rawValue }
    }

    @Test(
        "a due timer that joined the mode during the timer step fires in a run nested in a later timer's callback",
        arguments: backends, JoinsDuringStep.allCases)
    func nestedRunServesTimerSetAside(_ backend: BackendKind, _ joins: JoinsDuringStep) async throws {
        for tolerance in [Duration.zero, .milliseconds(1)] {
            let trace = Trace()
            let mode: Loop.Mode = "running"
            try await onLoopThread(backend) { loop in
                let due = loop.now
                let t = try Loop.Timer(fireAt: due, tolerance: tolerance) { _ in
                    trace("T")
                    loop.stop() // Ends the nested run: it served T.
                }
                switch joins {
                case .addedToMode: loop.add(t, to: "other")
                case .modeMadeCommon: loop.add(t, to: .common)
                }
                let m = try Loop.Timer(fireAt: due) { _ in
                    trace("M")
                    switch joins {
                    case .addedToMode: loop.add(t, to: mode)
                    case .modeMadeCommon: loop.addCommonMode(mode)
                    }
                }
                let n = try Loop.Timer(fireAt: due) { _ in
                    trace("N")
                    trace("nested: \(loop.run(mode, timeout: generousDeadline))")
                }
                loop.add(m, to: mode)
                loop.add(n, to: mode)
                trace("outer: \(loop.run(mode, timeout: generousDeadline))")
                t.invalidate()
            }
            #expect(
                trace.all == ["M", "N", "T", "nested: stopped", "outer: finished"], "tolerance \(tolerance)")
        }
    }
}
