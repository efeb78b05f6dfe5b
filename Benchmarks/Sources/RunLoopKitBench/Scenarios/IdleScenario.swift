import CBenchGLib
import CoreFoundation
import Foundation
import NIOCore
import NIOPosix
import RunLoopKit

/// **idle** — what a loop costs while it has nothing to do but a 100 ms repeating timer.
///
/// The loop idles for 2 s. We read its thread's CPU time (CLOCK_THREAD_CPUTIME_ID, on the loop
/// thread itself) and the process's (getrusage) before and after, and count wakeups: from
/// `Loop.statistics` for RunLoopKit, from a `kCFRunLoopAfterWaiting` observer for CF, directly
/// for the floor (a 100 ms periodic timerfd in epoll). An idle loop should wake 10 times a second.
/// NIO: `scheduleRepeatedTask` every 100 ms; it has no wakeup counter, so its wakeups are its
/// task's runs (nothing else wakes an idle NIO loop). GLib alone (`g_timeout_add(100)`) and a
/// loop embedded in GLib (a RunLoopKit timer, served through GLib's wait) count their timer's
/// runs the same way.
struct IdleScenario {
    let context: Context

    func run() {
        let seconds = context.settings.idleSeconds
        for subject in context.settings.subjects {
            context.progress.show("idle · \(subject) (\(seconds) s)")
            do {
                let (cpu, processCPU, wakeups) = try measure(subject, seconds: seconds)
                context.results.add(
                    metrics: [
                        Metric(name: "loop CPU µs/s", value: Double(cpu) / 1e3 / seconds, unit: "µs/s"),
                        Metric(name: "process CPU µs/s", value: Double(processCPU) / 1e3 / seconds, unit: "µs/s"),
                        Metric(name: "wakeups/s", value: Double(wakeups) / seconds, unit: "1/s"),
                    ], scenario: "idle", variant: "100ms-timer", subject: subject.description,
                    note: Self.note(subject))
            } catch {
                context.results.skip(
                    scenario: "idle", variant: "100ms-timer", subject: subject.description, why: "\(error)")
            }
        }
    }

    private static func note(_ subject: Subject) -> String? {
        switch subject {
        case .nio: "nio: scheduleRepeatedTask; wakeups = task runs"
        // One note for both: a table's header shows its first subject's note.
        case .glib, .embedded: "glib: g_timeout_add(100) repeating; glib, embedded: wakeups = the timer's runs"
        default: nil
        }
    }

    static func processCPU() -> UInt64 {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func nanos(_ time: timeval) -> UInt64 { UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_usec) * 1_000 }
        return nanos(usage.ru_utime) + nanos(usage.ru_stime)
    }

    private func measure(_ subject: Subject, seconds: Double) throws -> (cpu: UInt64, process: UInt64, wakeups: UInt64)
    {
        let period: UInt64 = 100_000_000
        let nanoseconds = UInt64(seconds * 1e9)
        switch subject {
        case let .kit(kind):
            let host = try KitHost.start(kind) { loop in
                loop.add(
                    try Loop.Timer(after: .nanoseconds(period), repeating: .nanoseconds(period)) { _ in }, to: .default)
            }
            let cpu0 = host.onLoop { Time.threadCPU() }
            let (stats0, process0) = (host.loop.statistics, Self.processCPU())
            Time.sleep(nanoseconds: nanoseconds)
            let (stats1, process1) = (host.loop.statistics, Self.processCPU())
            let cpu1 = host.onLoop { Time.threadCPU() }
            host.stop()
            return (cpu1 - cpu0, process1 - process0, stats1.wakeups - stats0.wakeups)
        case .coreFoundation:
            let counter = Owned<CFWakeCounter?>(nil)
            let host = CFHost.start { loop in
                let seconds = Double(period) / 1e9
                let timer = CFRunLoopTimerCreateWithHandler(
                    kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + seconds, seconds, 0, 0
                ) { _ in }
                CFRunLoopAddTimer(loop.ref, timer, CFLoop.mode)
                counter.value = CFWakeCounter(on: loop)
            }
            let wakes = counter.value!
            let cpu0 = host.onLoop { Time.threadCPU() }
            let (count0, process0) = (wakes.count.load(ordering: .relaxed), Self.processCPU())
            Time.sleep(nanoseconds: nanoseconds)
            let (count1, process1) = (wakes.count.load(ordering: .relaxed), Self.processCPU())
            let cpu1 = host.onLoop { Time.threadCPU() }
            host.stop()
            wakes.invalidate()
            return (cpu1 - cpu0, process1 - process0, count1 - count0)
        case .nio:
            let host = NIOHost()
            let runs = FireCounter()
            let task = host.loop.scheduleRepeatedTask(
                initialDelay: .nanoseconds(Int64(period)), delay: .nanoseconds(Int64(period))
            ) { _ in
                runs.bump()
            }
            let cpu0 = host.onLoop { Time.threadCPU() }
            let (count0, process0) = (runs.value, Self.processCPU())
            Time.sleep(nanoseconds: nanoseconds)
            let (count1, process1) = (runs.value, Self.processCPU())
            let cpu1 = host.onLoop { Time.threadCPU() }
            task.cancel()
            host.stop()
            return (cpu1 - cpu0, process1 - process0, count1 - count0)
        case .glib:
            // A repeating 100 ms timeout (what g_timeout_add makes) on the loop's context; as
            // for NIO, its runs stand for the wakeups (nothing else wakes an idle GMainLoop).
            let runs = FireCounter()
            let host = GLibHost.start { main in
                let source = g_timeout_source_new(UInt32(period / 1_000_000))!
                g_source_set_callback(
                    source,
                    { data in
                        Unmanaged<FireCounter>.fromOpaque(data!).takeUnretainedValue().bump()
                        return GLibConstant.continue
                    }, Unmanaged.passUnretained(runs).toOpaque(), nil)
                g_source_attach(source, main.context)
                g_source_unref(source)
            }
            let cpu0 = host.onLoop { Time.threadCPU() }
            let (count0, process0) = (runs.value, Self.processCPU())
            Time.sleep(nanoseconds: nanoseconds)
            let (count1, process1) = (runs.value, Self.processCPU())
            let cpu1 = host.onLoop { Time.threadCPU() }
            // The context, and with it the timeout, goes when the loop's thread ends; `runs`
            // outlives it (held here until then).
            host.stop()
            withExtendedLifetime(runs) {}
            return (cpu1 - cpu0, process1 - process0, count1 - count0)
        case .embedded:
            // The embedded loop never waits itself (GLib's loop does, on the loop's descriptor),
            // so `Loop.statistics` counts no wakeups; as for GLib alone, the timer's runs stand
            // for them (nothing else wakes the idle GLib loop). The thread's CPU is GLib's
            // iterations and the loop's passes together: what the embedding costs while idle.
            let runs = FireCounter()
            let host = try KitHost.start(subject) { loop in
                loop.add(
                    try Loop.Timer(after: .nanoseconds(period), repeating: .nanoseconds(period)) { _ in runs.bump() },
                    to: .default)
            }
            let cpu0 = host.onLoop { Time.threadCPU() }
            let (count0, process0) = (runs.value, Self.processCPU())
            Time.sleep(nanoseconds: nanoseconds)
            let (count1, process1) = (runs.value, Self.processCPU())
            let cpu1 = host.onLoop { Time.threadCPU() }
            host.stop()
            return (cpu1 - cpu0, process1 - process0, count1 - count0)
        case .floor:
            let result = Owned((cpu: UInt64(0), process: UInt64(0), wakeups: UInt64(0)))
            PThread {
                let poller = FloorPoller()
                let fd = FD.timerfd()
                defer { close(fd) }
                poller.add(fd, token: 0)
                let start = Time.now()
                FD.arm(fd, at: start + period, interval: period)
                let (cpu0, process0) = (Time.threadCPU(), Self.processCPU())
                var wakeups: UInt64 = 0
                while Time.now() - start < nanoseconds {
                    poller.wait(timeout: start + nanoseconds - Time.now()) { _ in FD.drain(fd) }
                    wakeups += 1
                }
                result.value = (Time.threadCPU() - cpu0, Self.processCPU() - process0, wakeups)
            }.join()
            return result.value
        }
    }
}
