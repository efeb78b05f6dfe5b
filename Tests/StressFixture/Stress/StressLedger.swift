import RunLoopKit

/// What the stress loop's thread has seen, touched on that thread only: a block costs no lock
/// on the loop's side. The test reads it after the loop's thread has been joined.
final class StressLedger: @unchecked Sendable {
    // @unchecked: written on the loop's thread only; read by the test after joining that thread.
    let shared: StressShared
    private(set) var nextBlock: [Int]
    private(set) var nextMessage: [Int]
    private(set) var seenSignal: [Int]
    private(set) var signalPerforms = 0
    private(set) var nestedResults: [String: Int] = [:]
    private(set) var timerFires = 0
    /// The final block ran: every producer's blocks were posted before it.
    var producersFinished = false
    /// Everything expected arrived; the loop thread stops re-running.
    private(set) var isFinished = false

    init(shared: StressShared) {
        self.shared = shared
        let count = shared.plan.producers
        nextBlock = Array(repeating: 0, count: count)
        nextMessage = Array(repeating: 0, count: count)
        seenSignal = Array(repeating: -1, count: count)
    }

    /// A producer's block ran: it must be that producer's next one.
    func block(_ producer: Int, _ sequence: Int) {
        if sequence != nextBlock[producer] {
            shared.violations.record(
                "producer \(producer): block \(sequence) ran when block \(nextBlock[producer]) was due")
        }
        nextBlock[producer] = sequence + 1
        shared.consumed[producer].store(sequence + 1)
        if sequence & 1023 == 0 { shared.watchdog.beat() }
    }

    /// A port message arrived: it must be its producer's next one.
    func message(_ message: StressMessage, on loop: Loop) {
        if message.sequence != nextMessage[message.producer] {
            shared.violations.record(
                "producer \(message.producer): message \(message.sequence) arrived when \(nextMessage[message.producer]) was due"
            )
        }
        nextMessage[message.producer] = message.sequence + 1
        finishIfComplete(loop)
    }

    /// A producer's version-0 source was performed.
    func signalPerformed(_ producer: Int, on loop: Loop) {
        signalPerforms += 1
        seenSignal[producer] = max(seenSignal[producer], shared.signalValue[producer].value)
        finishIfComplete(loop)
    }

    func nestedRun(ended result: Loop.RunResult) {
        nestedResults[result.description, default: 0] += 1
    }

    func timerFired() { timerFires += 1 }

    /// Stops the loop for good once every block, message and last signal has arrived.
    func finishIfComplete(_ loop: Loop) {
        guard !isFinished, producersFinished else { return }
        let plan = shared.plan
        guard nextMessage.allSatisfy({ $0 == plan.messagesPerProducer }),
            seenSignal.allSatisfy({ $0 == plan.finalSignal })
        else { return }
        isFinished = true
        loop.stop()
    }
}
