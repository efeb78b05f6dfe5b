import Glibc
import RunLoopKit
import TestSupport

/// One producer thread: posts its blocks in order, and along the way sends port messages,
/// signals its version-0 source and posts blocks that run the loop in another mode.
struct StressProducer: Sendable {
    let index: Int
    let loop: Loop
    let ledger: StressLedger
    let port: Loop.Port<StressMessage>
    let source: Loop.Source
    let shared: StressShared

    func run() {
        let plan = shared.plan
        var messages = 0
        for sequence in 0..<plan.blocksPerProducer {
            guard waitForRoom(before: sequence) else { return }
            loop.perform { [ledger, index] in ledger.block(index, sequence) }
            if sequence % plan.messageEvery == plan.messageEvery - 1 {
                port.send(StressMessage(producer: index, sequence: messages))
                messages += 1
            }
            if sequence % plan.signalEvery == plan.signalEvery - 1 {
                shared.signalValue[index].store(sequence)
                source.signal()
            }
            if index == 0, sequence % plan.nestedEvery == plan.nestedEvery / 2 {
                loop.perform { [loop, ledger] in
                    let result = loop.run(StressPlan.nestedMode, timeout: .milliseconds(1))
                    ledger.nestedRun(ended: result)
                    if loop.currentMode != .default {
                        ledger.shared.violations.record(
                            "after a nested run the current mode is \(String(describing: loop.currentMode)), not default"
                        )
                    }
                }
            }
        }
        shared.signalValue[index].store(plan.finalSignal)
        source.signal()
    }

    /// Waits while this producer is `window` blocks ahead of the loop.
    private func waitForRoom(before sequence: Int) -> Bool {
        let consumed = shared.consumed[index]
        guard sequence - consumed.value >= shared.plan.window else { return true }
        var lastProgress = (consumed.value, ContinuousClock.now)
        while sequence - consumed.value >= shared.plan.window / 2 {
            // A pause, not a spin: four spinning producers would starve the loop on 2 cores.
            var pause = timespec(tv_sec: 0, tv_nsec: 100_000)
            nanosleep(&pause, nil)
            let now = consumed.value
            if now != lastProgress.0 {
                lastProgress = (now, ContinuousClock.now)
            } else if ContinuousClock.now - lastProgress.1 > generousDeadline {
                shared.violations.record(
                    "producer \(index): the loop ran none of its blocks for \(generousDeadline) (stuck at \(now))")
                return false
            }
        }
        return true
    }
}
