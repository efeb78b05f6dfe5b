import RunLoopKit

// Top-level code is main-actor code, and so is the timer's handler: it may count in `ticks`.
var ticks = 0
let timer = try Loop.Timer(after: .milliseconds(100), repeating: .milliseconds(100)) { timer in
    ticks += 1
    print("tick \(ticks)")
    if ticks == 3 {
        timer.invalidate()
        Loop.current.stop()
    }
}
Loop.current.add(timer, to: .default) // on the main thread, Loop.current is Loop.main
Loop.current.run() // until stop()
print("done after \(ticks) ticks")
