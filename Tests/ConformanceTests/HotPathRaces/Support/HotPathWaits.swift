import Glibc
import RunLoopKit
import TestSupport

/// Polls `condition` (yielding, then napping 20 µs) until it holds or `timeout` passes: for
/// states nobody announces, such as `Loop.isWaiting`.
func hotPathWait(within timeout: Duration = generousDeadline, until condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    var polls = 0
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        polls += 1
        if polls < 64 {
            sched_yield()
        } else {
            var pause = timespec(tv_sec: 0, tv_nsec: 20_000)
            nanosleep(&pause, nil)
        }
    }
    return true
}

/// Joins `threads`, failing only when `progress` stood still for a whole ``generousDeadline``.
///
/// The posters' work takes longer the more loaded the machine (twice as long with two other
/// suites building), so a limit on its whole length fails tests that found nothing; each wait
/// of a poster has a deadline of its own, so a stalled loop is still caught, by that wait or
/// here when nothing moves.
func joinPosters(_ threads: [TestThread], whileProgressing progress: () -> Int) -> Bool {
    for thread in threads {
        var last = progress()
        while !thread.join(within: generousDeadline) {
            let now = progress()
            if now == last { return false }
            last = now
        }
    }
    return true
}
