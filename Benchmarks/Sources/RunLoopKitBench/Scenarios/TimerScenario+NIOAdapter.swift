import NIOCore
import RunLoopKit
import RunLoopKitNIO

/// **timer / nio-scheduleTask** — SwiftNIO's `scheduleTask` on a RunLoopKit loop
/// (`loop.eventLoop`, RunLoopKitNIO) against NIO's own event loop.
///
/// The same chain as NIO's one-shot row, on every subject: on the loop's thread,
/// `scheduleTask(deadline: NIODeadline.now() + d)` (d the one-shot delays, 1–5 ms); the task
/// records lateness = `NIODeadline.now()` − deadline on NIO's clock (CLOCK_MONOTONIC) and schedules
/// the next. On RunLoopKit the deadline becomes a loop timer on CLOCK_BOOTTIME, so the figure
/// includes that conversion. Interleaved rounds, as the one-shot variant.
extension TimerScenario {
    func measureScheduleTask(delays: [UInt64]) {
        var subjects: [(name: String, measure: ([UInt64]) throws -> Recorder)] = []
        for subject in context.settings.subjects {
            switch subject {
            case .kit, .main, .embedded:
                subjects.append((subject.description, { try adapterOneShot(subject, delays: $0) }))
            case .nio: subjects.append((subject.description, { nioOneShot(delays: $0) }))
            case .coreFoundation, .glib, .floor: continue
            }
        }
        var recorders = [Recorder](repeating: Recorder(), count: subjects.count)
        var failures = [String?](repeating: nil, count: subjects.count)
        let share = max(delays.count / Self.rounds, 1)
        for round in 0..<Self.rounds {
            let start = min(round * share, delays.count)
            let end = round == Self.rounds - 1 ? delays.count : min((round + 1) * share, delays.count)
            let slice = Array(delays[start..<end])
            for (index, subject) in subjects.enumerated() where failures[index] == nil {
                context.progress.show("timer/nio-scheduleTask · \(subject.name) (round \(round + 1) of \(Self.rounds))")
                do {
                    recorders[index].merge(try subject.measure(slice))
                } catch {
                    failures[index] = "\(error)"
                }
            }
        }
        for (index, subject) in subjects.enumerated() {
            if let why = failures[index] {
                context.results.skip(scenario: "timer", variant: "nio-scheduleTask", subject: subject.name, why: why)
            } else {
                context.results.add(
                    latency: recorders[index], scenario: "timer", variant: "nio-scheduleTask", subject: subject.name,
                    note: "lateness vs NIODeadline")
            }
        }
    }

    /// The NIO chain on a RunLoopKit loop (`subject`), through its `EventLoop` adapter.
    private func adapterOneShot(_ subject: Subject, delays: [UInt64]) throws -> Recorder {
        let host = try KitHost.start(subject)
        let eventLoop = host.loop.eventLoop
        let chain = NIOChain(loop: eventLoop, delays: delays)
        eventLoop.execute { chain.arm(0) }
        _ = chain.done.wait()
        host.stop()
        return chain.recorder
    }
}
