import Dispatch
import Glibc
import RunLoopKit
import Synchronization

/// **sleep-coalescing** — 1,000 tasks each sleeping 10 ms at a time, with 5 ms tolerance and with none, at
/// seeded random phases: the coalescing scenario's timers, as async code writes them. Three
/// ways to sleep: `Task.sleep` in tasks that prefer a loop as their executor (the loop's
/// `SchedulingExecutor` arms a loop timer per sleep), `loop.sleep(for:tolerance:)` from tasks on
/// the default executor, and `Task.sleep` on the default executor (Dispatch's timers, where
/// RunLoopKit plays no part). Reported per second over the measuring window after 200 ms of
/// settling: the loop's wakeups (its counters; none for the default executor), the process's
/// voluntary context switches (every thread that blocked and was woken: the loop's, the
/// cooperative pool's, Dispatch's timer thread; comparable across all three), and sleeps ended
/// (the same work, as a check).
struct SleepCoalescingScenario {
    let context: Context

    private enum Way: CaseIterable {
        case taskSleepOnLoop, loopSleep, taskSleepOnDefault

        var name: String {
            switch self {
            case .taskSleepOnLoop: "Task.sleep, loop executor"
            case .loopSleep: "loop.sleep"
            case .taskSleepOnDefault: "Task.sleep, default executor"
            }
        }
    }

    func run() {
        let settings = context.settings
        let phases = SplitMix64.draws(settings.coalescingTimers, in: 0...9_999_999, seed: settings.seed, stream: 5)
        for (way, tolerance) in Way.allCases.flatMap({ way in [(way, 5), (way, 0)] }) {
            let variant = "tolerance-\(tolerance)ms"
            // The default executor's sleeps do not depend on a backend: measured once.
            let backends: [BackendKind?] =
                way == .taskSleepOnDefault
                ? [nil]
                : context.kitBackends.compactMap { subject in
                    if case let .kit(kind) = subject { kind } else { nil }
                }
            for backend in backends {
                let subject = backend.map { "\(way.name) (\($0))" } ?? way.name
                context.progress.show("sleep-coalescing/\(variant) · \(subject) (\(settings.coalescingSeconds) s)")
                do {
                    let figures = try measure(
                        way, backend: backend, phases: phases, tolerance: .milliseconds(tolerance),
                        seconds: settings.coalescingSeconds)
                    var metrics = [
                        Metric(name: "switches/s", value: figures.switches, unit: "1/s"),
                        Metric(name: "sleeps/s", value: figures.sleeps, unit: "1/s"),
                    ]
                    if let wakeups = figures.loopWakeups {
                        metrics.insert(Metric(name: "wakeups/s", value: wakeups, unit: "1/s"), at: 0)
                    }
                    context.results.add(
                        metrics: metrics, scenario: "sleep-coalescing", variant: variant, subject: subject)
                } catch {
                    context.results.skip(
                        scenario: "sleep-coalescing", variant: variant, subject: subject, why: "\(error)")
                }
            }
        }
    }

    private func measure(
        _ way: Way, backend: BackendKind?, phases: [UInt64], tolerance: Duration, seconds: Double
    ) throws -> (loopWakeups: Double?, switches: Double, sleeps: Double) {
        let host = try backend.map { try KitHost.start($0) }
        let sleeps = Atomic<UInt64>(0)
        let ended = DispatchSemaphore(value: 0)
        let start = ContinuousClock.now
        var tasks: [Task<Void, Never>] = []
        for phase in phases {
            let first = start + .nanoseconds(phase)
            let body: @Sendable () async -> Void = {
                do {
                    try await ContinuousClock().sleep(until: first)
                    while true {
                        switch way {
                        case .taskSleepOnLoop, .taskSleepOnDefault:
                            try await Task.sleep(for: .milliseconds(10), tolerance: tolerance)
                        case .loopSleep:
                            try await host!.loop.sleep(for: .milliseconds(10), tolerance: tolerance)
                        }
                        sleeps.add(1, ordering: .relaxed)
                    }
                } catch {
                    ended.signal()
                }
            }
            tasks.append(
                way == .taskSleepOnLoop ? Task(executorPreference: host!.loop, operation: body) : Task(operation: body))
        }
        Time.sleep(nanoseconds: 200_000_000)
        let (wakes0, switches0, sleeps0, t0) = (
            host?.loop.statistics.wakeups.total, Self.voluntarySwitches(), sleeps.load(ordering: .relaxed), Time.now()
        )
        Time.sleep(nanoseconds: UInt64(seconds * 1e9))
        let (wakes1, switches1, sleeps1, t1) = (
            host?.loop.statistics.wakeups.total, Self.voluntarySwitches(), sleeps.load(ordering: .relaxed), Time.now()
        )
        for task in tasks { task.cancel() }
        for _ in tasks { ended.wait() }
        host?.stop()
        let elapsed = Double(t1 - t0) / 1e9
        let wakeups = wakes0.flatMap { w0 in wakes1.map { Double($0 - w0) / elapsed } }
        return (wakeups, Double(switches1 - switches0) / elapsed, Double(sleeps1 - sleeps0) / elapsed)
    }

    /// The process's voluntary context switches so far (getrusage).
    private static func voluntarySwitches() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_nvcsw
    }
}
