// A timer in the common modes keeps firing while a "tracking" mode runs; a timer in `.default`
// pauses meanwhile and resumes after.
//
// A run serves only the items of its mode. That is the point of modes: while a UI tracks a
// drag, its loop runs a tracking mode so that work meant for quiet moments (a `.default`
// timer) waits. `.common` is not a mode but a set of them: an item added to `.common` is in
// every common mode, now and later, and `addCommonMode` makes "tracking" one of them. So a
// timer that must not pause (an animation, a clock) goes in `.common`.
//
//   swift run --package-path Examples common-mode-timers
import Glibc
import RunLoopKit

let loop = Loop.current
let tracking: Loop.Mode = "tracking"
loop.addCommonMode(tracking)

// Which stretch of the run we are in; each ends by stopping its run once enough has fired.
// Counting fires, rather than measuring time, keeps the example's story the same on a busy
// machine where timers fire late. The phase and the counts live on the loop's thread (this
// one) only: `LoopBoundBox` shares them with the `@Sendable` timer handlers without a lock.
enum Phase { case before, tracking, after }
let phase = LoopBoundBox(Phase.before, loop: loop)
func currentPhase() -> Phase { phase.value }

// How often each timer fired in each phase, keyed "<timer> <phase>" ("default tracking").
let fires = LoopBoundBox([String: Int](), loop: loop)
func count(_ timer: String, in phase: Phase) -> Int { fires.value["\(timer) \(phase)", default: 0] }

func phaseIsComplete() -> Bool {
    switch currentPhase() {
    case .before: count("common", in: .before) >= 3 && count("default", in: .before) >= 3
    case .tracking: count("common", in: .tracking) >= 5
    case .after: count("default", in: .after) >= 1
    }
}

@Sendable func fired(_ timer: String) {
    let total = fires.withValue { fires in
        fires["\(timer) \(currentPhase())", default: 0] += 1
        return fires["\(timer) \(currentPhase())"]!
    }
    print("  \(timer) timer fired in mode \(loop.currentMode!) (\(total) in this phase)")
    if phaseIsComplete() { loop.stop() }
}

let commonTimer = try Loop.Timer(after: .milliseconds(20), repeating: .milliseconds(20)) { _ in fired("common") }
let defaultTimer = try Loop.Timer(after: .milliseconds(20), repeating: .milliseconds(20)) { _ in fired("default") }
loop.add(commonTimer, to: .common)
loop.add(defaultTimer, to: .default)

// Each run has a generous timeout only so that a broken build cannot hang.
print("Running .default: both timers fire.")
let before = loop.run(.default, timeout: .seconds(30))

print("Running \"tracking\" (a common mode): only the common timer fires.")
phase.value = .tracking
let during = loop.run(tracking, timeout: .seconds(30))

// The default timer missed several of its instants meanwhile. It does not fire once per
// missed instant: it fires once, then goes back to its 20 ms grid.
print("Running .default again: the default timer resumes.")
phase.value = .after
let after = loop.run(.default, timeout: .seconds(30))

commonTimer.invalidate()
defaultTimer.invalidate()
let pausedFires = count("default", in: .tracking)
print("The default timer fired \(pausedFires) times while tracking ran.")
guard [before, during, after] == [.stopped, .stopped, .stopped], pausedFires == 0 else {
    print("common-mode-timers: expected three stopped runs and no default fire while tracking")
    exit(1)
}
