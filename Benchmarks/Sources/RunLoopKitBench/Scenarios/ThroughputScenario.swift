import Dispatch
import NIOCore
import NIOPosix
import RunLoopKit
import Synchronization

/// **throughput** — blocks per second posted to a running loop, by 1 then 4 threads.
///
/// The posters start together (released by a semaphore) and post as fast as they can; each
/// block bumps a counter on the loop thread, and the block that brings it to the total records
/// the end time. Rate = total / (end − release). A missing block would leave the counter short:
/// the run waits at most 60 s and reports how many were lost. Each variant runs three times,
/// interleaved with the others; the table shows the median rate and every lost block.
/// The floor is the smallest correct queue: a mutex-guarded array swapped out by the consumer,
/// and an eventfd written only when the consumer has said it is going to sleep.
struct ThroughputScenario {
    let context: Context

    /// Every variant runs this many times, interleaved with the others, and reports its
    /// median: a single run depends on what ran just before it (the previous loop's threads
    /// winding down, where the allocator's memory sits), enough to halve a rate.
    static let rounds = 3

    func run() {
        let total = context.settings.blocks
        // `perform(in: [.default])`, the modes built at each call as users write them, must
        // cost what `perform { }` costs (RunLoopKit only: CF's perform takes its modes
        // otherwise).
        let variants = [(1, false), (1, true), (4, false)]
        var rates: [String: [Double]] = [:]
        var lost: [String: Int] = [:]
        var failures: [String: String] = [:]
        for round in 1...Self.rounds {
            for (posters, inModes) in variants {
                let variant = "\(posters)-thread" + (inModes ? "-in-modes" : "")
                for subject in context.settings.subjects {
                    if inModes, !subject.isKitLoop { continue }
                    let key = "\(variant) \(subject)"
                    guard failures[key] == nil else { continue }
                    context.progress.show(
                        "throughput/\(variant) · \(subject) (\(total) blocks, round \(round) of \(Self.rounds))")
                    do {
                        let (rate, missing) = try measure(subject, posters: posters, total: total, inModes: inModes)
                        rates[key, default: []].append(rate)
                        lost[key, default: 0] += missing
                    } catch {
                        failures[key] = "\(error)"
                    }
                }
            }
        }
        for (posters, inModes) in variants {
            let variant = "\(posters)-thread" + (inModes ? "-in-modes" : "")
            for subject in context.settings.subjects {
                if inModes, !subject.isKitLoop { continue }
                let key = "\(variant) \(subject)"
                if let why = failures[key] {
                    context.results.skip(
                        scenario: "throughput", variant: variant, subject: subject.description, why: why)
                    continue
                }
                let sorted = (rates[key] ?? [0]).sorted()
                context.results.add(
                    metrics: [
                        Metric(name: "blocks/s", value: sorted[sorted.count / 2], unit: "1/s"),
                        Metric(name: "lost", value: Double(lost[key] ?? 0), unit: "blocks"),
                    ], scenario: "throughput", variant: variant, subject: subject.description,
                    note: Self.note(subject, inModes: inModes))
            }
        }
    }

    private static func note(_ subject: Subject, inModes: Bool) -> String? {
        switch subject {
        case .kit: inModes ? "perform(in: [.default]) { }" : "perform { }"
        case .coreFoundation: "CFRunLoopPerformBlock + CFRunLoopWakeUp per block"
        case .embedded:
            inModes ? "perform(in: [.default]) { }, embedded in a GMainLoop" : "perform { }, embedded in a GMainLoop"
        case .nio: "execute { }"
        case .glib: "g_main_context_invoke (an idle source per block)"
        case .floor: "mutex-guarded array + eventfd"
        }
    }

    /// Counts blocks on the consumer thread; signals when the last one arrives.
    final class Tally: @unchecked Sendable {
        // `count` and `end` are touched only by the consumer thread until `done` is signalled.
        var count = 0
        var end: UInt64 = 0
        let total: Int
        let done = Probe()
        init(total: Int) { self.total = total }

        @inline(__always)
        func bump() {
            count += 1
            if count == total {
                end = Time.now()
                done.signal()
            }
        }
    }

    private func measure(
        _ subject: Subject, posters: Int, total: Int, inModes: Bool
    ) throws -> (rate: Double, lost: Int) {
        let tally = Tally(total: total)
        let post: @Sendable () -> Void
        let stop: () -> Void
        switch subject {
        case .kit, .embedded:
            let host = try KitHost.start(subject)
            let loop = host.loop
            if inModes {
                post = { loop.perform(in: [.default]) { tally.bump() } }
            } else {
                post = { loop.perform { tally.bump() } }
            }
            stop = host.stop
        case .coreFoundation:
            let host = CFHost.start()
            let loop = host.loop
            post = { loop.perform { tally.bump() } }
            stop = host.stop
        case .nio:
            let host = NIOHost()
            let loop = host.loop
            post = { loop.execute { tally.bump() } }
            stop = host.stop
        case .glib:
            let host = GLibHost.start()
            let main = host.main
            post = { main.perform { tally.bump() } }
            stop = host.stop
        case .floor:
            let queue = FloorQueue()
            post = { queue.post { tally.bump() } }
            stop = queue.stop
        }
        let release = DispatchSemaphore(value: 0)
        let share = total / posters
        let threads = (0..<posters).map { index in
            PThread {
                release.wait()
                let count = index == posters - 1 ? total - share * (posters - 1) : share
                for _ in 0..<count { post() }
            }
        }
        let start = Time.now()
        for _ in 0..<posters { release.signal() }
        for thread in threads { thread.join() }
        let finished = tally.done.wait(seconds: 60)
        stop()
        // After `stop` joined the consumer, its writes are visible here.
        let lost = total - tally.count
        guard finished else { return (0, lost) }
        return (Double(total) / (Double(tally.end - start) / 1e9), lost)
    }
}

/// The floor's block queue for the throughput scenario (see ThroughputScenario).
final class FloorQueue: Sendable {
    private struct State {
        var blocks: [@Sendable () -> Void] = []
        var sleeping = false
        var woken = false
    }

    private let state = Mutex(State())
    private let floor: FloorLoop
    private let drainer: DrainBox

    /// The consumer's spare array, owned by the loop thread.
    private final class DrainBox: @unchecked Sendable {
        var spare: [@Sendable () -> Void] = []
        var queue: FloorQueue?
    }

    init() {
        let box = DrainBox()
        drainer = box
        floor = FloorLoop { box.queue?.drain() }
        box.queue = self
        // The first drain announces sleep; a post before it writes the eventfd itself.
        FD.signal(floor.wakeDescriptor)
    }

    func post(_ block: @escaping @Sendable () -> Void) {
        let wake: Bool = state.withLock { state in
            state.blocks.append(block)
            guard state.sleeping, !state.woken else { return false }
            state.woken = true
            return true
        }
        if wake { FD.signal(floor.wakeDescriptor) }
    }

    /// On the loop thread after a wake: run everything queued, then announce sleep.
    private func drain() {
        while true {
            var batch = drainer.spare
            let empty: Bool = state.withLock { state in
                state.sleeping = false
                state.woken = false
                swap(&batch, &state.blocks)
                if batch.isEmpty { state.sleeping = true }
                return batch.isEmpty
            }
            if empty { return }
            for block in batch { block() }
            batch.removeAll(keepingCapacity: true)
            drainer.spare = batch
        }
    }

    func stop() {
        floor.stop()
        // The consumer thread is joined: breaking the queue → loop → box → queue cycle is safe.
        drainer.queue = nil
    }
}
