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
/// (seeded) ready at a time and measures the latency until its handler runs, sleeping the
/// wake scenario's gaps in between.
struct ScaleScenario {
    let context: Context

    func run() {
        let settings = context.settings
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
            context.results.skip(scenario: "scale", variant: "timers", subject: "cf",
                                 why: "CF keeps timers in a sorted array (O(n) insert); \(settings.scaleTimers) would take minutes")
        }
        let limit = Limits.raiseOpenFiles()
        let needed = UInt64(settings.scaleDescriptors + 64)
        guard limit >= needed else {
            context.progress.warn("RLIMIT_NOFILE is \(limit) even raised to its hard limit; scale/descriptors needs \(needed): skipped")
            context.results.skip(scenario: "scale", variant: "descriptors", subject: "all", why: "RLIMIT_NOFILE \(limit) < \(needed)")
            return
        }
        let picks = SplitMix64.draws(settings.scaleDescriptorSamples, in: 0...UInt64(settings.scaleDescriptors - 1), seed: settings.seed, stream: 4)
        let gaps = SplitMix64.draws(settings.scaleDescriptorSamples, in: 50_000...500_000, seed: settings.seed, stream: 5)
        for subject in settings.subjects {
            context.progress.show("scale/descriptors · \(subject) (\(settings.scaleDescriptors))")
            do {
                guard let recorder = try descriptors(subject, count: settings.scaleDescriptors, picks: picks, gaps: gaps) else {
                    context.results.skip(scenario: "scale", variant: "descriptors", subject: subject.description,
                                         why: "CoreFoundation on Linux has no public descriptor source")
                    continue
                }
                context.results.add(latency: recorder, scenario: "scale", variant: "descriptors-\(settings.scaleDescriptors)", subject: subject.description)
            } catch {
                context.results.skip(scenario: "scale", variant: "descriptors", subject: subject.description, why: "\(error)")
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

    private func descriptors(_ subject: Subject, count: Int, picks: [UInt64], gaps: [UInt64]) throws -> Recorder? {
        let fds = (0..<count).map { _ in FD.eventfd() }
        defer { for fd in fds { close(fd) } }
        let probe = Probe()
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
        case .coreFoundation:
            return nil
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
        }
        // One unrecorded readiness first: the loop registers its 10,000 descriptors with the
        // backend on its first wait, which may still be going on.
        FD.signal(fds[0])
        _ = probe.wait()
        var recorder = Recorder()
        for (pick, gap) in zip(picks, gaps) {
            let t0 = Time.now()
            FD.signal(fds[Int(pick)])
            let t1 = probe.wait()
            recorder.record(nanoseconds: t1 &- t0)
            Time.sleep(nanoseconds: gap)
        }
        stop()
        return recorder
    }
}
