import Glibc
import RunLoopKit
import TestSupport

/// One stress run on one backend: 4 producers post blocks, messages and signals to one loop
/// while churn threads add, remove and invalidate items, a disruptor calls `stop()` and
/// `wakeUp()`, nested runs come and go and a repeating timer ticks.
///
/// Runs in a process of its own, so that the descriptor count it checks is its own.
enum StressRun {
    /// What a stress run reports besides its violations (recorded as issues directly).
    struct Summary: Sendable, CustomStringConvertible {
        var seconds = 0.0
        var outerRuns = 0
        var nestedRuns: [String: Int] = [:]
        var timerFires = 0
        var signalPerforms = 0
        var churnRounds = 0
        var stops = 0

        var description: String {
            "\((seconds * 10).rounded() / 10) s, \(outerRuns) outer runs, nested \(nestedRuns), \(timerFires) timer fires, "
                + "\(signalPerforms) version-0 performs, \(churnRounds) churn rounds, \(stops) stops"
        }
    }

    /// Runs the stress and checks that it left no descriptor open.
    static func perform(_ backend: BackendKind) throws -> Summary {
        // Whatever a first loop of this backend opens for the whole process (a library's own
        // descriptors) is opened before the baseline is taken.
        try warmUp(backend)
        let before = DescriptorSnapshot.take()
        let summary = try run(backend)
        let after = DescriptorSnapshot.take()
        check(
            after.count == before.count,
            "descriptors before the run: \(before.count), after: \(after.count); new: \(after.added(since: before))")
        return summary
    }

    private static func warmUp(_ backend: BackendKind) throws {
        let thread = try TestThread {
            let (loop, port): (Loop, Loop.Port<Int>)
            do {
                (loop, port) = (try Loop.current(backend: backend), try Loop.Port<Int>())
            } catch {
                fail("the warm-up loop could not be created: \(error)")
                return
            }
            let source = Loop.Source(port: port) { _ in }
            loop.add(source, to: .default)
            port.send(1)
            _ = loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
            source.invalidate()
        }
        check(thread.join(), "the warm-up loop's thread did not finish")
    }

    /// Everything the run creates is released when this returns.
    private static func run(_ backend: BackendKind) throws -> Summary {
        let started = ContinuousClock.now
        let watchdog = try Watchdog("the stress run on \(backend)")
        defer { watchdog.stop() }
        let shared = StressShared(plan: StressPlan(), watchdog: watchdog)
        let ledger = StressLedger(shared: shared)
        let items = Ref<StressItems>()
        let ready = Latch()
        var summary = Summary()
        let outerRuns = Ref<Int>()

        let loopThread = try TestThread {
            do {
                let built = try StressItems(backend: backend, ledger: ledger)
                let kernel = try KernelRegistrations.find(for: built.loop)
                items.value = built
                ready.open()
                var runs = 0
                while !ledger.isFinished {
                    _ = built.loop.run()
                    runs += 1
                }
                outerRuns.value = runs
                built.invalidateEverything()
                check(
                    built.loop.registeredDescriptorCount == 0,
                    "\(built.loop.registeredDescriptorCount) descriptors still registered after invalidating every source"
                )
                checkNothingRegisteredInKernel(kernel, "after invalidating every source")
                let last = built.loop.run(timeout: .zero)
                check(
                    last == .finished,
                    "after invalidating everything a poll of the default mode returned \(last), not finished")
            } catch {
                fail("the stress loop could not start: \(error)")
                ready.open()
            }
        }
        ready.wait()
        guard let built = items.value else {
            loopThread.join()
            return summary
        }

        let producers = try (0..<shared.plan.producers).map { index in
            let producer = StressProducer(
                index: index, loop: built.loop, ledger: ledger, port: built.port, source: built.signalSources[index],
                shared: shared)
            return try TestThread { producer.run() }
        }
        let sourceChurn = StressChurn(loop: built.loop, shared: shared)
        let timerChurn = StressChurn(loop: built.loop, shared: shared)
        let churners = [
            try TestThread { sourceChurn.churnSourcesAndObservers() },
            try TestThread { timerChurn.churnTimers() },
        ]
        let stops = Ref<Int>()
        let disruptor = try TestThread { stops.value = StressDisruptor(loop: built.loop, shared: shared).run() }

        // The watchdog ends the process if the run stops making progress; these joins only
        // need to outlast a slow but live run.
        for thread in producers { thread.join(within: .seconds(3600)) }
        shared.producersDone.store(true, ordering: .releasing)
        for thread in churners + [disruptor] { thread.join(within: .seconds(3600)) }
        // Posted after every producer's last block: when it runs, they all ran (FIFO).
        built.loop.perform {
            ledger.producersFinished = true
            ledger.finishIfComplete(built.loop)
        }
        loopThread.join(within: .seconds(3600))

        sourceChurn.finish()
        timerChurn.finish()
        let plan = shared.plan
        check(
            ledger.nextBlock == Array(repeating: plan.blocksPerProducer, count: plan.producers),
            "blocks run per producer: \(ledger.nextBlock), expected \(plan.blocksPerProducer) each")
        check(
            ledger.nextMessage == Array(repeating: plan.messagesPerProducer, count: plan.producers),
            "messages delivered per producer: \(ledger.nextMessage), expected \(plan.messagesPerProducer) each")
        check(
            ledger.seenSignal == Array(repeating: plan.finalSignal, count: plan.producers),
            "last signal seen per producer: \(ledger.seenSignal), expected \(plan.finalSignal)")
        check(
            Set(ledger.nestedResults.keys).isSubset(of: ["timedOut", "stopped"]),
            "nested runs ended with \(ledger.nestedResults)")
        check(ledger.timerFires > 0, "the repeating timer never fired")
        check(shared.violations.count == 0, "\(shared.violations.count) violations, first: \(shared.violations.first)")

        summary.seconds = (ContinuousClock.now - started).inSeconds
        summary.outerRuns = outerRuns.value ?? 0
        summary.nestedRuns = ledger.nestedResults
        summary.timerFires = ledger.timerFires
        summary.signalPerforms = ledger.signalPerforms
        summary.churnRounds = sourceChurn.rounds + timerChurn.rounds
        summary.stops = stops.value ?? 0
        return summary
    }
}
