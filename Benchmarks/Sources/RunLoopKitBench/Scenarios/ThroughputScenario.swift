import CBenchFloor
import Dispatch
import NIOCore
import NIOPosix
import RunLoopKit

/// **throughput** — blocks per second posted to a running loop, by 1 then 4 threads.
///
/// The posters start together (released by a semaphore) and post as fast as they can; each
/// block bumps a counter on the loop thread, and the block that brings it to the total records
/// the end time. Rate = total / (end − release). A missing block would leave the counter short:
/// the run waits at most 60 s and reports how many were lost. Each variant runs three times,
/// interleaved with the others; the table shows the median rate and every lost block.
/// The floor is the smallest correct queue, in C (CBenchFloor's queue.c): function pointers
/// appended to a mutex-guarded array that the consumer swaps out whole, and an eventfd written
/// only when the consumer has said it is going to sleep; the posters' loops and the count are C.
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
        case .kit, .main: inModes ? "perform(in: [.default]) { }" : "perform { }"
        case .coreFoundation: "CFRunLoopPerformBlock + CFRunLoopWakeUp per block"
        case .embedded:
            inModes ? "perform(in: [.default]) { }, embedded in a GMainLoop" : "perform { }, embedded in a GMainLoop"
        case .nio: "execute { }"
        case .glib: "g_main_context_invoke (an idle source per block)"
        case .floor: "C: fn pointers, mutex-guarded array swapped whole, eventfd only on announced sleep"
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
        if subject == .floor { return try measureFloor(posters: posters, total: total) }
        let tally = Tally(total: total)
        let post: @Sendable () -> Void
        let stop: () -> Void
        switch subject {
        case .kit, .main, .embedded:
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
            preconditionFailure("measured by measureFloor")
        }
        let start = Self.post(total, from: posters) { count in for _ in 0..<count { post() } }
        let finished = tally.done.wait(seconds: 60)
        stop()
        // After `stop` joined the consumer, its writes are visible here.
        let lost = total - tally.count
        guard finished else { return (0, lost) }
        return (Double(total) / (Double(tally.end - start) / 1e9), lost)
    }

    /// The floor: C posters (`cbench_floor_queue_post_many`) append the C function
    /// `cbench_floor_tally_bump` to CBenchFloor's queue; the tally, in C as well, counts on the
    /// consumer thread and records the end (see Sources/CBenchFloor/queue.c).
    private func measureFloor(posters: Int, total: Int) throws -> (rate: Double, lost: Int) {
        guard let tally = cbench_floor_tally_new(UInt64(total)) else {
            throw FloorError(what: "the floor's tally", code: errno)
        }
        defer { cbench_floor_tally_free(tally) }
        let queue = try FloorQueue()
        let context = UnsafeMutableRawPointer(tally)
        let start = Self.post(total, from: posters) { [context = SendablePointer(context)] count in
            queue.post(cbench_floor_tally_bump, context.pointer, count: count)
        }
        let finished = cbench_floor_tally_wait(tally, 60)
        queue.stop()
        // After `stop` joined the consumer, its count is visible here.
        let lost = total - Int(cbench_floor_tally_count(tally))
        guard finished else { return (0, lost) }
        return (Double(total) / (Double(cbench_floor_tally_end(tally) - start) / 1e9), lost)
    }

    /// Starts `posters` threads, releases them together and waits until each has posted its
    /// share of `total` with `post(share)`; returns the release time.
    private static func post(_ total: Int, from posters: Int, _ post: @escaping @Sendable (Int) -> Void) -> UInt64 {
        let release = DispatchSemaphore(value: 0)
        let share = total / posters
        let threads = (0..<posters).map { index in
            PThread {
                release.wait()
                post(index == posters - 1 ? total - share * (posters - 1) : share)
            }
        }
        let start = Time.now()
        for _ in 0..<posters { release.signal() }
        for thread in threads { thread.join() }
        return start
    }
}
