// A stall monitor catching a slow callout.
//
// A timer's handler blocks the loop's thread for 300 ms (standing in for slow work done on the
// wrong thread: a synchronous file read, a lock held elsewhere). The monitor, on a thread of
// its own, reports the stall once while it lasts and once when the loop gets going again.
//
//     swift run --package-path Examples stall-monitor
//
// prints (durations vary a little):
//
//     timer: working slowly…
//     stall began: 150 ms in a timer callout (phase timers)
//     stall ended: 300 ms in a timer callout (phase timers)
import Dispatch
import Glibc
import RunLoopKit

let loop = Loop.current
let ended = DispatchSemaphore(value: 0)

// Reports arrive on the monitor's thread, never on the loop's.
let monitor = try StallMonitor(loop: loop, threshold: .milliseconds(100)) { report in
    print(report)
    if report.event == .ended { ended.signal() }
}

let slow = try Loop.Timer(after: .milliseconds(10)) { _ in
    print("timer: working slowly…")
    usleep(300_000)
    loop.stop()
}
loop.add(slow, to: .default)
loop.run() // fires the timer; its handler stops the run

// The loop is idle now: the monitor sees the stall is over.
ended.wait()
monitor.stop()
