// `perform(after:in:)`: work for later, and only in the modes you name.
//
// CFRunLoop's "perform after delay in modes" is how a UI defers work until the user stops
// interacting: a block for `.default` that falls due while a tracking mode runs waits until
// the loop is back in `.default`. The same block for `.common` runs in any common mode, so it
// does not wait. Underneath is a one-shot timer, returned so that the block can be cancelled.
//
//   swift run --package-path Examples delayed-perform
import Glibc
import RunLoopKit

let loop = Loop.current
let tracking: Loop.Mode = "tracking"
loop.addCommonMode(tracking)

let started = ContinuousClock.now
@Sendable func log(_ text: String) {
    let elapsed = Int((ContinuousClock.now - started) / .milliseconds(1))
    print("\(String(repeating: " ", count: max(0, 5 - String(elapsed).count)))\(elapsed) ms  \(text)")
}

// Which block ran in which mode, in the order they ran. Only the loop's thread (this one)
// touches it: a `LoopBoundBox` shares it with the `@Sendable` blocks without a lock.
struct Ran: Equatable {
    let block: String
    let mode: Loop.Mode
}
let ranIn = LoopBoundBox([Ran](), loop: loop)
@Sendable func ran(_ block: String) {
    let mode = loop.currentMode!
    ranIn.withValue { $0.append(Ran(block: block, mode: mode)) }
    log("\(block) block ran in \(mode)")
}

let defaultOnly = loop.perform(after: .milliseconds(30), in: [.default]) {
    ran("default-only")
    // The deferred work is what the program was waiting for: end the run.
    loop.stop()
}
loop.perform(after: .milliseconds(30), in: [.common]) { ran("common") }
let cancelled = loop.perform(after: .milliseconds(30), in: [.default]) { ran("cancelled") }
cancelled.invalidate() // never runs

// Stand-in for a user's drag: run "tracking" until both blocks are due and the common one has
// run. A repeating timer in "tracking" looks every 10 ms; counting on what happened rather than
// on how long it took keeps the example right on a machine where timers fire late.
let due = defaultOnly.nextFireInstant
let tracker = try Loop.Timer(after: .milliseconds(10), repeating: .milliseconds(10)) { _ in
    guard ContinuousClock.now >= due, !ranIn.value.isEmpty else { return }
    log("tracking ends; the default-only block is due, and waits for .default")
    loop.stop()
}
loop.add(tracker, to: tracking)

log("running \"tracking\" (blocks due at 30 ms)")
let trackingResult = loop.run(tracking, timeout: .seconds(30))
tracker.invalidate()

log("running .default")
let defaultResult = loop.run(.default, timeout: .seconds(30))

let order = ranIn.value
guard trackingResult == .stopped, defaultResult == .stopped,
    order == [Ran(block: "common", mode: tracking), Ran(block: "default-only", mode: .default)]
else {
    print("delayed-perform: expected the common block in tracking, then the default-only block in default")
    exit(1)
}
log("done; the cancelled block never ran")
