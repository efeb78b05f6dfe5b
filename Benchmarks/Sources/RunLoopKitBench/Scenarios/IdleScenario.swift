import CBenchGLib
import CoreFoundation
import Foundation
import NIOCore
import NIOPosix
import RunLoopKit

/// **idle** — what a loop costs while it has nothing to do but a 100 ms repeating timer.
///
/// Each subject idles in a child process of its own (`runloopkit-bench idle-cost --subject S
/// --seconds T`), so that the process's CPU time is that subject's alone: every thread it
/// made (a loop thread, NIO's, Foundation's, libdispatch's workers) counted, and no other
/// subject's threads (a NIO group winding down, a CF thread, the wake scenario's spinning
/// driver) or the harness's own. In the child, the loop idles 2 s; we read the process's CPU
/// time (CLOCK_PROCESS_CPUTIME_ID: every thread, those that ended included) and the loop
/// thread's (its thread CPU clock, read from the child's main thread) before and after, and count wakeups: from
/// `Loop.statistics` for RunLoopKit, from a `kCFRunLoopAfterWaiting` observer for CF, directly
/// for the floor (epoll_pwait2 timing out every 100 ms). An idle loop should wake 10 times a
/// second. NIO: `scheduleRepeatedTask` every 100 ms; it has no wakeup counter, so its wakeups
/// are its task's runs (nothing else wakes an idle NIO loop). GLib alone (`g_timeout_add(100)`)
/// and a loop embedded in GLib (a RunLoopKit timer, served through GLib's wait) count their
/// timer's runs the same way. The child's main thread sleeps in `nanosleep` meanwhile; for a
/// main subject (`epoll-main`, …) it runs `Loop.main` instead, and a pthread takes the window.
struct IdleScenario {
    let context: Context

    /// What the child measured, in nanoseconds of CPU and wakeups over the window.
    struct Figures {
        var loop: UInt64 = 0
        var process: UInt64 = 0
        var wakeups: UInt64 = 0
    }

    func run() {
        let seconds = context.settings.idleSeconds
        for subject in Self.pairingMainLoops(context.settings.subjects) {
            context.progress.show("idle · \(subject) (\(seconds) s, in a child process)")
            do {
                let figures = try Self.runChild(subject, seconds: seconds)
                context.results.add(
                    metrics: [
                        Metric(name: "process CPU µs/s", value: Double(figures.process) / 1e3 / seconds, unit: "µs/s"),
                        Metric(name: "loop CPU µs/s", value: Double(figures.loop) / 1e3 / seconds, unit: "µs/s"),
                        Metric(name: "wakeups/s", value: Double(figures.wakeups) / seconds, unit: "1/s"),
                    ], scenario: "idle", variant: "100ms-timer", subject: subject.description,
                    note: Self.note(subject))
            } catch {
                context.results.skip(
                    scenario: "idle", variant: "100ms-timer", subject: subject.description, why: "\(error)")
            }
        }
    }

    /// `subjects` with each main subject moved right behind the same backend's loop on a
    /// thread, so that the two are measured a few seconds apart (this VM drifts over minutes).
    private static func pairingMainLoops(_ subjects: [Subject]) -> [Subject] {
        var ordered: [Subject] = []
        for subject in subjects where !subject.isMain {
            ordered.append(subject)
            if case let .kit(kind) = subject, subjects.contains(.main(kind)) { ordered.append(.main(kind)) }
        }
        // A main subject whose thread loop is not measured keeps its own place, at the end.
        ordered += subjects.filter { $0.isMain && !ordered.contains($0) }
        return ordered
    }

    private static func note(_ subject: Subject) -> String? {
        switch subject {
        case .nio: "a child process per subject; nio: scheduleRepeatedTask; wakeups = task runs"
        // One note for both: a table's header shows its first subject's note.
        case .glib, .embedded:
            "a child process per subject; glib: g_timeout_add(100) repeating; glib, embedded: wakeups = the timer's runs"
        default: "a child process per subject: process CPU is its threads' alone"
        }
    }

    /// Runs `subject`'s idle measurement in a child process and reads its figures.
    static func runChild(_ subject: Subject, seconds: Double) throws -> Figures {
        let lines = try ChildProcess.run([
            IdleChild.configuration.commandName!, "--subject", subject.description, "--seconds", "\(seconds)",
        ])
        var figures = Figures()
        var seen = 0
        for line in lines {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let value = UInt64(fields[1]) else { continue }
            switch fields[0] {
            case "loop": figures.loop = value
            case "process": figures.process = value
            case "wakeups": figures.wakeups = value
            default: continue
            }
            seen += 1
        }
        guard seen == 3 else { throw ChildProcess.Failure(description: "the idle child printed no figures") }
        return figures
    }

    /// The child's body: measures `subject` and prints `loop NS`, `process NS`, `wakeups N`
    /// (or `error …`).
    static func child(_ subject: Subject, seconds: Double) {
        do {
            let figures = try measure(subject, seconds: seconds)
            print("loop \(figures.loop)\nprocess \(figures.process)\nwakeups \(figures.wakeups)")
        } catch {
            print("error \(error)")
        }
    }

    /// The loop idles this long before the window opens: a child process starts cold (its
    /// code not yet paged in, its allocator's caches empty), and its first wakes cost several
    /// times what an idle loop costs later.
    static let settling: UInt64 = 500_000_000

    /// Lets the loop settle, then reads the loop thread's CPU clock (from this thread, through
    /// its id: the loop is not woken for it), the process's and the wakeups before and after
    /// idling `nanoseconds`. The process window holds nothing but the idling, and the loop
    /// thread's lies within it (a thread cannot have run more than its process).
    private static func window(thread: Int32, nanoseconds: UInt64, wakeups: () -> UInt64) -> Figures {
        Time.sleep(nanoseconds: settling)
        let (process0, loop0, wakes0) = (Time.processCPU(), Time.threadCPU(thread), wakeups())
        Time.sleep(nanoseconds: nanoseconds)
        let (wakes1, loop1, process1) = (wakeups(), Time.threadCPU(thread), Time.processCPU())
        return Figures(loop: loop1 - loop0, process: process1 - process0, wakeups: wakes1 - wakes0)
    }

    private static func measure(_ subject: Subject, seconds: Double) throws -> Figures {
        let period: UInt64 = 100_000_000
        let nanoseconds = UInt64(seconds * 1e9)
        switch subject {
        case let .kit(kind):
            let host = try KitHost.start(kind) { loop in
                loop.add(
                    try Loop.Timer(after: .nanoseconds(period), repeating: .nanoseconds(period)) { _ in }, to: .default)
            }
            let thread = host.onLoop { Syscalls.threadID() }
            let figures = window(thread: thread, nanoseconds: nanoseconds) { host.loop.statistics.wakeups.total }
            host.stop()
            return figures
        case let .main(kind):
            return try measureMain(kind, period: period, nanoseconds: nanoseconds)
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
            let thread = host.onLoop { Syscalls.threadID() }
            let figures = window(thread: thread, nanoseconds: nanoseconds) { wakes.count.load(ordering: .relaxed) }
            host.stop()
            wakes.invalidate()
            return figures
        case .nio:
            let host = NIOHost()
            let runs = FireCounter()
            let task = host.loop.scheduleRepeatedTask(
                initialDelay: .nanoseconds(Int64(period)), delay: .nanoseconds(Int64(period))
            ) { _ in
                runs.bump()
            }
            let thread = host.onLoop { Syscalls.threadID() }
            let figures = window(thread: thread, nanoseconds: nanoseconds) { runs.value }
            task.cancel()
            host.stop()
            return figures
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
            let thread = host.onLoop { Syscalls.threadID() }
            let figures = window(thread: thread, nanoseconds: nanoseconds) { runs.value }
            // The context, and with it the timeout, goes when the loop's thread ends; `runs`
            // outlives it (held here until then).
            host.stop()
            withExtendedLifetime(runs) {}
            return figures
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
            let thread = host.onLoop { Syscalls.threadID() }
            let figures = window(thread: thread, nanoseconds: nanoseconds) { runs.value }
            host.stop()
            return figures
        case .floor:
            // One system call per period: epoll_pwait2 with a timeout to the next 100 ms
            // instant (no timer descriptor to read), on an epoll set holding only the eventfd
            // that ends it.
            let runs = FireCounter()
            let thread = Handoff<Int32>()
            let quit = FD.eventfd()
            defer { close(quit) }
            let loop = PThread {
                let poller = FloorPoller()
                poller.add(quit, token: 0)
                thread.put(Syscalls.threadID())
                var next = Time.now() + period
                var running = true
                while running {
                    let now = Time.now()
                    poller.wait(timeout: next > now ? next - now : 0) { _ in running = false }
                    let woke = Time.now()
                    if running, woke >= next {
                        // One wake, however late: missed instants are skipped, as a repeating
                        // timer's are.
                        runs.bump()
                        while next <= woke { next += period }
                    }
                }
            }
            let figures = window(thread: thread.take(), nanoseconds: nanoseconds) { runs.value }
            FD.signal(quit)
            loop.join()
            return figures
        }
    }

    /// The main loop idling: this child's main thread serves `Loop.main` (`MainSubject`), as a
    /// program runs it, while a pthread adds the timer, takes the window (reading the main
    /// thread's CPU clock through its id, as for a loop thread) and so ends the serving.
    private static func measureMain(_ kind: BackendKind, period: UInt64, nanoseconds: UInt64) throws -> Figures {
        let timer = try Loop.Timer(after: .nanoseconds(period), repeating: .nanoseconds(period)) { _ in }
        let thread = Syscalls.threadID()
        let figures = Owned<Figures?>(nil)
        try MainSubject.serve(kind) {
            let loop = MainSubject.loop!
            loop.add(timer, to: .default)
            figures.value = window(thread: thread, nanoseconds: nanoseconds) { loop.statistics.wakeups.total }
            timer.invalidate()
        }
        return figures.value!
    }
}
