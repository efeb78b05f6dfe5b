import RunLoopKit
import TestSupport
import Testing

// The suite of the hot-path race windows. This file declares it and the check each test ends
// with; each other file of this folder adds the test of one window with the race that drives
// it, and Support/ holds what the races share (the loop on its own thread, the posters' waits
// and moments).

/// The race windows of a pass's lock-free fast paths, one test each (behaviour contract,
/// Sources/Core/RunLoopKit.docc/BehaviourContract.md › C2: No lost wakeups; L4: Everything else
/// from any thread).
///
/// A pass looks at some state without the loop's lock (its `PassHints`, in
/// Sources/Core/Pass/PassHints.swift, which states who raises and lowers each): whether a
/// version-0 source may be signalled (`maybeSignalled`), whether blocks are queued
/// (`BlockQueue`'s count, with `SleepGate` between the loop's decision to sleep and a poster's
/// wake), whether `wakeUp()` is pending (`wakeRequested`), which observers to notify (a snapshot
/// kept while `observersVersion` is unchanged), whether the descriptors changed
/// (`descriptorsChanged`) and whether a stop landed since a run was recorded (`stopsRequested`). Each test has threads change that state at varied moments of
/// the loop's pass (right after it reacted, a swept short delay, a yield, once it sleeps) and
/// waits, with ``generousDeadline``, for the loop to react: a change the loop misses shows as a
/// deadline that passes (a loop asleep for good), a wrong reaction as a recorded violation.
/// Nothing here asserts timing. Each test owns its loop, on a thread of its own; sizes scale
/// with `RUNLOOPKIT_STRESS_SCALE`.
///
/// Each test's "Catches" was checked by planting that bug in a copy of Core: every one failed
/// its test (the narrowest ones — a store a few instructions past an unlock — in about half
/// the runs of one backend; the others at once).
@Suite("Hot-path race windows")
struct HotPathRaceTests {
    /// The loop's thread finished (a lost wake would leave it asleep), left nothing registered
    /// in the backend and never woke for nothing.
    func expectClean(_ report: HotPathLoop.Report?, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let report else {
            Issue.record(
                "the loop's thread did not finish within \(generousDeadline) of being stopped",
                sourceLocation: sourceLocation)
            return
        }
        #expect(report.registeredDescriptors == 0, "descriptors left registered", sourceLocation: sourceLocation)
        #expect(report.inKernel.isEmpty, "left registered in the kernel", sourceLocation: sourceLocation)
        #expect(report.statistics.wakeups[.spurious] == 0, "spurious wakeups", sourceLocation: sourceLocation)
    }
}
