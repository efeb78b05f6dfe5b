// The classic first experiment with a run loop: watch every activity of its passes.
//
// A run is a series of passes. Each pass announces `beforeTimers` and `beforeSources`, runs
// the queued blocks and the signalled (version-0) sources, then — unless a source was just
// performed, whose work may have made more — announces `beforeWaiting` and sleeps in the
// kernel until a timer is due, a descriptor is ready or another thread wakes it.
// `afterWaiting` follows, then the due timers fire and the ready descriptor (version-1)
// sources are handled. `entry` and `exit` bracket the whole run.
//
// Here a timer wakes the sleeping loop and signals a source; the source is performed at the
// start of the next pass, which therefore does not sleep, and it stops the run.
//
//   swift run --package-path Examples observer-activities
import Glibc
import RunLoopKit
import Synchronization

let loop = Loop.current // on the main thread: Loop.main
let started = ContinuousClock.now

@Sendable func log(_ text: String) {
    let elapsed = (ContinuousClock.now - started) / .milliseconds(1)
    print("\(String(Int(elapsed)).leftPadded(to: 5)) ms  \(text)")
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

// Numbering the passes makes the output readable: a pass begins with `beforeTimers`.
let passes = Atomic<Int>(0)
let observer = Loop.Observer(activities: .allActivities) { _, activity in
    if activity == .beforeTimers {
        log("pass \(passes.add(1, ordering: .relaxed).newValue)")
    }
    // Indented under its pass; `entry` and `exit` belong to the run, not to a pass.
    let inPass = activity != .entry && activity != .exit
    log((inPass ? "    " : "") + "observer: \(activity)")
}
// An observer watches one mode (or `.common`); it never keeps a run going by itself.
loop.add(observer, to: .default)

// The source does nothing until someone signals it. Being signalled from the loop's own
// thread, it runs at the start of the next pass — no sleep in between.
let source = Loop.Source {
    log("        source performed: stop the run")
    loop.stop()
}
loop.add(source, to: .default)

// The timer is the only thing due, so the first pass sleeps until it fires.
let timer = try Loop.Timer(after: .milliseconds(50)) { _ in
    log("        timer fired: signal the source")
    source.signal()
}
loop.add(timer, to: .default)

// A generous timeout only so that a broken build cannot hang; the source stops the run.
let result = loop.run(.default, timeout: .seconds(30))
log("run returned .\(result)")

// Expected: entry; pass 1 sleeps (beforeWaiting, afterWaiting) and fires the timer; pass 2
// performs the source without sleeping; exit.
guard result == .stopped, passes.load(ordering: .relaxed) == 2 else {
    print("observer-activities: expected 2 passes and .stopped, got \(passes.load(ordering: .relaxed)) and .\(result)")
    exit(1)
}
