import Foundation
import Glibc
import RunLoopKit

/// **scale** — costs that grow with the number of items.
///
/// timers (libuv's million-timers benchmark): on a loop thread, create and add N one-shot
/// timers at seeded instants within the next 10 ms, invalidate every other one, then run
/// until the mode is empty (every remaining timer fired). Each phase is timed; the same at
/// N/10 shows the growth: ns per timer grows by about log(N)/log(N/10) when add, invalidate
/// and fire are O(log n), tenfold when they are O(n).
/// descriptors: 10,000 eventfds each watched by a version-1 source; the driver makes one
/// (seeded) ready at a time and measures the latency until its handler runs, with the spinning
/// wake driver and the wake scenario's gaps.
/// pass-N-fds: the cost of one `run(mode, timeout: .zero)` pass in a mode holding N idle
/// descriptor sources, at N = 100 and 10,000: a pass must not cost in proportion to the
/// descriptors that are not ready.
/// mode-switch-N-fds: a handler in mode "outer" runs the loop nested in mode "tracking" for one
/// zero-timeout pass and returns (as UI tracking does); both modes hold the same N descriptor
/// sources. One switch is one outer pass plus one nested run.
/// rearm: one timer's fire instant set 1,000,000 times; the process's resident memory must not
/// grow with the number of re-arms.
struct ScaleScenario {
    let context: Context

    func run() {
        let settings = context.settings
        for subject in settings.subjects where subject.isMain {
            context.results.skip(
                scenario: "scale", variant: "timers", subject: subject.description, why: MainSubject.unmeasuredReason)
        }
        for subject in context.kitBackends {
            guard case let .kit(kind) = subject else { continue }
            for count in [settings.scaleTimers / 10, settings.scaleTimers] {
                context.progress.show("scale/timers · \(subject) (\(count))")
                million(kind, count: count, subject: subject.description)
            }
            // The same with 20,000 timers, in the default mode and in the common modes: common
            // items must not cost more than plain ones.
            for mode in [Loop.Mode.default, .common] {
                context.progress.show("scale/timers · \(subject) (20000, \(mode == .common ? "common" : "default"))")
                million(kind, count: 20_000, subject: subject.description, in: mode)
            }
        }
        if context.settings.wants(.coreFoundation) {
            context.results.skip(
                scenario: "scale", variant: "timers", subject: "cf",
                why: "CF keeps timers in a sorted array (O(n) insert); \(settings.scaleTimers) would take minutes")
        }
        if context.settings.wants(.nio) {
            context.results.skip(
                scenario: "scale", variant: "timers", subject: "nio",
                why:
                    "cancelling a NIO scheduled task searches its heap linearly; \(settings.scaleTimers / 2) cancels would take minutes"
            )
        }
        for subject in context.kitBackends {
            guard case let .kit(kind) = subject else { continue }
            context.progress.show("scale/rearm · \(subject) (\(settings.rearms))")
            rearm(kind, count: settings.rearms, subject: subject.description)
        }
        let limit = Limits.raiseOpenFiles()
        let needed = UInt64(settings.scaleDescriptors + 64)
        guard limit >= needed else {
            context.progress.warn(
                "RLIMIT_NOFILE is \(limit) even raised to its hard limit; scale/descriptors needs \(needed): skipped")
            context.results.skip(
                scenario: "scale", variant: "descriptors", subject: "all", why: "RLIMIT_NOFILE \(limit) < \(needed)")
            return
        }
        let picks = SplitMix64.draws(
            settings.scaleDescriptorSamples, in: 0...UInt64(settings.scaleDescriptors - 1), seed: settings.seed,
            stream: 4)
        let gaps = SplitMix64.draws(
            settings.scaleDescriptorSamples, in: 50_000...500_000, seed: settings.seed, stream: 5)
        let descriptorsVariant = "descriptors-\(settings.scaleDescriptors)"
        for subject in settings.subjects {
            context.progress.show("scale/descriptors · \(subject) (\(settings.scaleDescriptors))")
            do {
                switch subject {
                case .coreFoundation:
                    context.results.skip(
                        scenario: "scale", variant: descriptorsVariant, subject: subject.description,
                        why: "CoreFoundation on Linux has no public descriptor source")
                case .nio:
                    context.results.skip(
                        scenario: "scale", variant: descriptorsVariant, subject: subject.description,
                        why: "10,000 NIO pipe channels (see wake/descriptor for NIO's descriptor wake)")
                case .glib, .embedded:
                    context.results.skip(
                        scenario: "scale", variant: descriptorsVariant, subject: subject.description,
                        why: "scale measures RunLoopKit's own loops (for GLib's descriptor wake, see wake/descriptor)")
                case .main:
                    context.results.skip(
                        scenario: "scale", variant: descriptorsVariant, subject: subject.description,
                        why: MainSubject.unmeasuredReason)
                default:
                    var outcome: Result<WakeDriver.Run, any Error>?
                    context.withShallowIdle("scale/descriptors") {
                        outcome = Result {
                            try descriptors(subject, count: settings.scaleDescriptors, picks: picks, gaps: gaps)
                        }
                    }
                    let run = try outcome!.get()
                    if run.lost {
                        context.results.skip(
                            scenario: "scale", variant: descriptorsVariant, subject: subject.description,
                            why: "a readiness was not handled within 10 s")
                        continue
                    }
                    var recorder = Recorder()
                    for sample in run.samples { recorder.record(nanoseconds: sample) }
                    context.results.add(
                        latency: recorder, scenario: "scale", variant: descriptorsVariant, subject: subject.description,
                        note: "spinning driver",
                        metrics: [Metric(name: "posts to an awake loop", value: Double(run.awakeAtPost), unit: "posts")]
                    )
                }
            } catch {
                context.results.skip(
                    scenario: "scale", variant: descriptorsVariant, subject: subject.description, why: "\(error)")
            }
        }
        for count in [100, settings.scaleDescriptors] {
            for subject in settings.subjects where subject.isKit || subject == .floor {
                context.progress.show("scale/pass-\(count)-fds · \(subject)")
                passWithDescriptors(subject, count: count)
            }
        }
        for count in [100, settings.scaleDescriptors] {
            for subject in context.kitBackends {
                guard case let .kit(kind) = subject else { continue }
                context.progress.show("scale/mode-switch-\(count)-fds · \(subject)")
                modeSwitch(kind, count: count, subject: subject.description)
            }
        }
    }

    // MARK: timers

    /// Counts fires and checks that no invalidated timer fired; owned by the loop thread.
    private final class Tally: @unchecked Sendable {
        var fired = 0
        var wrongly = 0
    }

    private func million(_ kind: BackendKind, count: Int, subject: String, in mode: Loop.Mode? = nil) {
        let variant = "timers-\(count)" + (mode.map { $0 == .common ? "-common" : "-default" } ?? "")
        let offsets = SplitMix64.draws(count, in: 0...9_999_999, seed: context.settings.seed, stream: 6)
        let outcome = Owned<Result<[Metric], any Error>?>(nil)
        PThread {
            outcome.value = Result {
                let loop = try Loop.current(backend: kind)
                let tally = Tally()
                let base = ContinuousClock.now
                let t0 = Time.now()
                var timers: [Loop.Timer] = []
                timers.reserveCapacity(count)
                for (index, offset) in offsets.enumerated() {
                    let doomed = index % 2 == 0
                    let timer = try Loop.Timer(fireAt: base + .nanoseconds(offset)) { _ in
                        if doomed { tally.wrongly += 1 } else { tally.fired += 1 }
                    }
                    loop.add(timer, to: mode ?? .default)
                    timers.append(timer)
                }
                let t1 = Time.now()
                for index in stride(from: 0, to: count, by: 2) { timers[index].invalidate() }
                let t2 = Time.now()
                timers.removeAll()
                loop.run(.default)
                let t3 = Time.now()
                let perTimer = { (nanoseconds: UInt64, n: Int) in Double(nanoseconds) / Double(n) }
                return [
                    Metric(name: "total ms", value: Double(t3 - t0) / 1e6, unit: "ms"),
                    Metric(name: "add ns/timer", value: perTimer(t1 - t0, count), unit: "ns"),
                    Metric(name: "invalidate ns/timer", value: perTimer(t2 - t1, count / 2), unit: "ns"),
                    Metric(name: "fire ns/timer", value: perTimer(t3 - t2, count - count / 2), unit: "ns"),
                    Metric(name: "fired", value: Double(tally.fired), unit: "timers"),
                    Metric(name: "fired wrongly", value: Double(tally.wrongly), unit: "timers"),
                ]
            }
        }.join()
        switch outcome.value! {
        case let .success(metrics):
            context.results.add(metrics: metrics, scenario: "scale", variant: variant, subject: subject)
        case let .failure(error):
            context.results.skip(scenario: "scale", variant: variant, subject: subject, why: "\(error)")
        }
    }

    // MARK: descriptors

    private func descriptors(_ subject: Subject, count: Int, picks: [UInt64], gaps: [UInt64]) throws -> WakeDriver.Run {
        let fds = (0..<count).map { _ in FD.eventfd() }
        defer { for fd in fds { close(fd) } }
        let probe = Probe(blocking: false)
        let stop: () -> Void
        switch subject {
        case let .kit(kind):
            let sources = try fds.map { fd in
                try Loop.Source(fileDescriptor: fd) { _ in
                    FD.drain(fd)
                    probe.mark()
                }
            }
            let host = try KitHost.start(kind) { loop in
                for source in sources { loop.add(source, to: .default) }
            }
            stop = {
                for source in sources { source.invalidate() }
                host.stop()
            }
        case .floor:
            let quit = FD.eventfd()
            let ready = Probe()
            let thread = PThread {
                let poller = FloorPoller()
                for (index, fd) in fds.enumerated() { poller.add(fd, token: UInt64(index)) }
                poller.add(quit, token: .max)
                ready.signal()
                var running = true
                while running {
                    poller.wait { token in
                        if token == .max { running = false; return }
                        FD.drain(fds[Int(token)])
                        probe.mark()
                    }
                }
            }
            _ = ready.wait()
            stop = {
                FD.signal(quit)
                thread.join()
                close(quit)
            }
        case .coreFoundation, .nio, .glib, .embedded, .main:
            preconditionFailure("not measured")
        }
        // One unrecorded readiness first: the loop registers its 10,000 descriptors with the
        // backend on its first wait, which may still be going on.
        probe.arm()
        FD.signal(fds[0])
        guard probe.spin() != nil else { return WakeDriver.Run(lost: true) }
        let run = WakeDriver.spinning(probe, gaps: gaps, warmup: 0) { index in FD.signal(fds[Int(picks[index])]) }
        if !run.lost { stop() }
        return run
    }

    // MARK: passes with many descriptors

    /// ns per zero-timeout pass in a mode holding `count` idle eventfd sources (floor: a
    /// zero-timeout epoll_pwait2 on an epoll set of `count` idle eventfds). Runs up to
    /// `scalePasses` passes after a tenth as many to warm up, or 3 s, whichever ends first.
    private func passWithDescriptors(_ subject: Subject, count: Int) {
        let variant = "pass-\(count)-fds"
        let passes = context.settings.scalePasses
        // Also timed, for the kit: adding the sources (up to the first pass, which registers
        // them with the backend) and invalidating them all.
        typealias Timing = (nanoseconds: UInt64, passes: Int, add: UInt64, invalidate: UInt64)
        let outcome = Owned<Result<Timing, any Error>?>(nil)
        let fds = (0..<count).map { _ in FD.eventfd() }
        defer { for fd in fds { close(fd) } }
        PThread {
            outcome.value = Result {
                switch subject {
                case let .kit(kind):
                    let loop = try Loop.current(backend: kind)
                    let mode: Loop.Mode = "scale-pass"
                    let t0 = Time.now()
                    let sources = try fds.map { try Loop.Source(fileDescriptor: $0) { _ in } }
                    for source in sources { loop.add(source, to: mode) }
                    _ = loop.run(mode, timeout: .zero)
                    let t1 = Time.now()
                    let timed = Self.timePasses(passes) { _ = loop.run(mode, timeout: .zero) }
                    let t2 = Time.now()
                    for source in sources { source.invalidate() }
                    let t3 = Time.now()
                    return (timed.nanoseconds, timed.passes, t1 - t0, t3 - t2)
                case .floor:
                    let poller = FloorPoller()
                    let t0 = Time.now()
                    for (index, fd) in fds.enumerated() { poller.add(fd, token: UInt64(index)) }
                    let t1 = Time.now()
                    let timed = Self.timePasses(passes) { poller.wait(timeout: 0) { _ in } }
                    return (timed.nanoseconds, timed.passes, t1 - t0, 0)
                case .coreFoundation, .nio, .glib, .embedded, .main:
                    preconditionFailure("not measured")
                }
            }
        }.join()
        switch outcome.value! {
        case let .success((nanoseconds, done, add, invalidate)):
            let perPass = Double(nanoseconds) / Double(done)
            var metrics = [
                Metric(name: "ns/pass", value: perPass, unit: "ns"),
                Metric(name: "passes/s", value: 1e9 / perPass, unit: "1/s"),
                Metric(name: "passes", value: Double(done), unit: "passes"),
                Metric(name: "add all ms", value: Double(add) / 1e6, unit: "ms"),
            ]
            if subject != .floor {
                metrics.append(Metric(name: "invalidate all ms", value: Double(invalidate) / 1e6, unit: "ms"))
            }
            context.results.add(
                metrics: metrics, scenario: "scale", variant: variant, subject: subject.description,
                note:
                    "\(count) idle descriptor sources; run(mode, timeout: .zero); add all: until the first pass returned"
            )
        case let .failure(error):
            context.results.skip(scenario: "scale", variant: variant, subject: subject.description, why: "\(error)")
        }
    }

    /// Runs `pass` a tenth of `passes` times to warm up, then up to `passes` times or 3 s;
    /// returns the time and number of the timed passes.
    private static func timePasses(_ passes: Int, _ pass: () -> Void) -> (nanoseconds: UInt64, passes: Int) {
        for _ in 0..<max(passes / 10, 1) { pass() }
        let start = Time.now()
        let limit = start + 3_000_000_000
        var done = 0
        while done < passes {
            for _ in 0..<100 { pass() }
            done += 100
            if Time.now() > limit { break }
        }
        return (Time.now() - start, done)
    }

    // MARK: mode switching

    /// Switches counted on the loop thread; owned by it.
    private final class SwitchState: @unchecked Sendable {
        var count = 0
        var start: UInt64 = 0
        var end: UInt64 = 0
    }

    private func modeSwitch(_ kind: BackendKind, count: Int, subject: String) {
        let variant = "mode-switch-\(count)-fds"
        let switches = context.settings.scaleSwitches
        let warmup = 10 // the first switches register the descriptors for the first time
        let fds = (0..<count).map { _ in FD.eventfd() }
        defer { for fd in fds { close(fd) } }
        let outcome = Owned<Result<(nanoseconds: UInt64, switches: Int), any Error>?>(nil)
        PThread {
            outcome.value = Result {
                let loop = try Loop.current(backend: kind)
                let outer: Loop.Mode = "outer"
                let tracking: Loop.Mode = "tracking"
                let sources = try fds.map { try Loop.Source(fileDescriptor: $0) { _ in } }
                for source in sources {
                    loop.add(source, to: outer)
                    loop.add(source, to: tracking)
                }
                defer { for source in sources { source.invalidate() } }
                let state = SwitchState()
                let deadline = Time.now() + 3_000_000_000
                // The "event" whose handler tracks: one nested zero-timeout run in the other mode,
                // then it signals itself again for the next outer pass. It stops after
                // `switches` timed switches, or 3 s.
                let box = Owned<Loop.Source?>(nil)
                let event = Loop.Source {
                    state.count += 1
                    if state.count == warmup { state.start = Time.now() }
                    if state.count > warmup {
                        let now = Time.now()
                        if state.count - warmup >= switches || now > deadline {
                            state.end = now
                            loop.stop()
                            return
                        }
                    }
                    _ = loop.run(tracking, timeout: .zero)
                    box.value?.signal()
                }
                box.value = event
                loop.add(event, to: outer)
                defer { event.invalidate(); box.value = nil }
                // Settle the outer mode in the backend first, then go.
                for _ in 0..<10 { _ = loop.run(outer, timeout: .zero) }
                event.signal()
                _ = loop.run(outer, timeout: .seconds(60))
                return (state.end - state.start, state.count - warmup)
            }
        }.join()
        switch outcome.value! {
        case let .success((nanoseconds, done)) where done > 0:
            let perSwitch = Double(nanoseconds) / Double(done)
            context.results.add(
                metrics: [
                    Metric(name: "ns/switch", value: perSwitch, unit: "ns"),
                    Metric(name: "switches/s", value: 1e9 / perSwitch, unit: "1/s"),
                    Metric(name: "switches", value: Double(done), unit: "switches"),
                ], scenario: "scale", variant: variant, subject: subject,
                note: "\(count) descriptor sources in both modes; a nested zero-timeout run and back")
        case .success:
            context.results.skip(scenario: "scale", variant: variant, subject: subject, why: "no switch was timed")
        case let .failure(error):
            context.results.skip(scenario: "scale", variant: variant, subject: subject, why: "\(error)")
        }
    }

    // MARK: re-arming

    /// One timer (in `.default`, an hour away) re-armed `count` times on its loop's thread, the
    /// loop not running; reports the resident memory the process gained and ns per re-arm.
    private func rearm(_ kind: BackendKind, count: Int, subject: String) {
        let variant = "rearm-\(count)"
        let outcome = Owned<Result<[Metric], any Error>?>(nil)
        PThread {
            outcome.value = Result {
                let loop = try Loop.current(backend: kind)
                let base = ContinuousClock.now + .seconds(3600)
                let timer = try Loop.Timer(fireAt: base) { _ in }
                loop.add(timer, to: .default)
                defer { timer.invalidate() }
                _ = loop.run(.default, timeout: .zero)
                // A first round, so that the queue's storage reached its working size.
                for index in 0..<1_000 { timer.nextFireInstant = base + .nanoseconds(index) }
                let rss0 = Self.residentBytes()
                let t0 = Time.now()
                for index in 0..<count { timer.nextFireInstant = base + .nanoseconds(index) }
                let t1 = Time.now()
                let rss1 = Self.residentBytes()
                return [
                    Metric(name: "RSS growth KB", value: (Double(rss1) - Double(rss0)) / 1024, unit: "KB"),
                    Metric(name: "ns/re-arm", value: Double(t1 - t0) / Double(count), unit: "ns"),
                ]
            }
        }.join()
        switch outcome.value! {
        case let .success(metrics):
            context.results.add(
                metrics: metrics, scenario: "scale", variant: variant, subject: subject,
                note: "one timer re-armed \(count) times; resident memory before and after")
        case let .failure(error):
            context.results.skip(scenario: "scale", variant: variant, subject: subject, why: "\(error)")
        }
    }

    /// The process's resident set, from /proc/self/statm.
    static func residentBytes() -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = UInt64(fields[1]) else { return 0 }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }
}
