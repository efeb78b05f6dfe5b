import CoreFoundation
import Foundation
import NIOCore
import NIOPosix
import RunLoopKit

/// **timer** — how late a timer fires, and how steady a repeating one is.
///
/// one-shot: on the loop thread, a one-shot timer for now + d (d seeded, uniform 1–5 ms,
/// tolerance zero); its callback records lateness = callback time − requested instant and arms
/// the next. Negative lateness (an early fire) is counted and reported, never hidden.
/// repeating: a 1 ms repeating timer for 2 s; each sample is |interval between callbacks − 1 ms|.
/// One-shot samples are taken in interleaved rounds (see `rounds`).
struct TimerScenario {
    let context: Context

    /// One-shot samples are taken in this many rounds, every subject taking its share in turn
    /// in each round, so that drift of the machine during the run shifts them alike (see the
    /// wake scenario).
    static let rounds = 10

    func run() {
        let settings = context.settings
        let delays = SplitMix64.draws(settings.timerSamples, in: 1_000_000...5_000_000, seed: settings.seed, stream: 2)
        var subjects: [(name: String, measure: ([UInt64]) throws -> Recorder)] = []
        for subject in settings.subjects {
            switch subject {
            case .kit, .main, .embedded:
                subjects.append((subject.description, { try kitOneShot(subject, delays: $0) }))
            case .coreFoundation:
                subjects.append((subject.description, { cfOneShot(delays: $0) }))
            case .nio:
                subjects.append((subject.description, { nioOneShot(delays: $0) }))
            case .glib:
                subjects.append((subject.description, { glibOneShot(delays: $0, exact: false) }))
                subjects.append(("glib-ready-time", { glibOneShot(delays: $0, exact: true) }))
            case .floor:
                for floor in TimerFloor.available {
                    subjects.append((floor.rawValue, { floor.lateness(delays: $0) }))
                }
            }
        }
        var recorders = [Recorder](repeating: Recorder(), count: subjects.count)
        var failures = [String?](repeating: nil, count: subjects.count)
        let share = max(delays.count / Self.rounds, 1)
        for round in 0..<Self.rounds {
            let slice = Array(
                delays[
                    min(
                        round * share, delays.count)..<(round == Self.rounds - 1
                        ? delays.count : min((round + 1) * share, delays.count))])
            for (index, subject) in subjects.enumerated() where failures[index] == nil {
                context.progress.show("timer/one-shot · \(subject.name) (round \(round + 1) of \(Self.rounds))")
                do {
                    recorders[index].merge(try subject.measure(slice))
                } catch {
                    failures[index] = "\(error)"
                }
            }
        }
        for (index, subject) in subjects.enumerated() {
            if let why = failures[index] {
                context.results.skip(scenario: "timer", variant: "one-shot", subject: subject.name, why: why)
            } else {
                context.results.add(
                    latency: recorders[index], scenario: "timer", variant: "one-shot", subject: subject.name,
                    note: "lateness")
            }
        }
        measureScheduleTask(delays: delays)
        let interval: UInt64 = 1_000_000
        for subject in settings.subjects {
            context.progress.show("timer/repeating-1ms · \(subject)")
            let variant = "repeating-1ms"
            do {
                let recorder: Recorder =
                    switch subject {
                    case .kit, .main, .embedded:
                        try kitRepeating(subject, interval: interval, seconds: settings.repeatingSeconds)
                    case .coreFoundation: cfRepeating(interval: interval, seconds: settings.repeatingSeconds)
                    case .nio: nioRepeating(interval: interval, seconds: settings.repeatingSeconds)
                    case .glib: glibRepeating(interval: interval, seconds: settings.repeatingSeconds)
                    case .floor: TimerFloor.periodicJitter(interval: interval, seconds: settings.repeatingSeconds)
                    }
                context.results.add(
                    latency: recorder, scenario: "timer", variant: variant,
                    subject: subject == .floor ? "floor-timerfd" : subject.description,
                    note: "|interval − 1 ms|")
            } catch {
                context.results.skip(scenario: "timer", variant: variant, subject: subject.description, why: "\(error)")
            }
        }
    }

    // MARK: RunLoopKit

    /// Arms the timers one after another on the loop thread; owned by that thread while armed.
    private final class KitChain: @unchecked Sendable {
        let loop: Loop
        let delays: [UInt64]
        let done = Probe()
        var recorder = Recorder()

        init(loop: Loop, delays: [UInt64]) {
            self.loop = loop
            self.delays = delays
        }

        func arm(_ index: Int) {
            guard index < delays.count else { return done.signal() }
            let requested = ContinuousClock.now + .nanoseconds(delays[index])
            let timer = try! Loop.Timer(fireAt: requested, tolerance: .zero) { [self] _ in
                recorder.record(signed: (ContinuousClock.now - requested).nanoseconds)
                arm(index + 1)
            }
            loop.add(timer, to: .default)
        }
    }

    private func kitOneShot(_ subject: Subject, delays: [UInt64]) throws -> Recorder {
        let host = try KitHost.start(subject)
        let chain = KitChain(loop: host.loop, delays: delays)
        host.loop.perform { chain.arm(0) }
        _ = chain.done.wait()
        host.stop()
        return chain.recorder
    }

    private func kitRepeating(_ subject: Subject, interval: UInt64, seconds: Double) throws -> Recorder {
        let jitter = Owned(Jitter(interval: interval, seconds: seconds))
        let done = Probe()
        let host = try KitHost.start(subject) { loop in
            let timer = try Loop.Timer(
                after: .nanoseconds(interval), repeating: .nanoseconds(interval), tolerance: .zero
            ) { timer in
                if jitter.value.tick() { timer.invalidate(); done.signal() }
            }
            loop.add(timer, to: .default)
        }
        _ = done.wait()
        host.stop()
        return jitter.value.recorder
    }

    // MARK: CoreFoundation

    /// The CF version of the chain. CF takes a `CFAbsoluteTime` fire date (wall-clock seconds
    /// as a Double); lateness is measured on CLOCK_MONOTONIC from the instant we asked for,
    /// read just before the date is computed (a bias against CF well under 1 µs).
    private final class CFChain: @unchecked Sendable {
        let loop: CFLoop
        let delays: [UInt64]
        let done = Probe()
        var recorder = Recorder()

        init(loop: CFLoop, delays: [UInt64]) {
            self.loop = loop
            self.delays = delays
        }

        func arm(_ index: Int) {
            guard index < delays.count else { return done.signal() }
            let requested = Time.now() + delays[index]
            let fireDate = CFAbsoluteTimeGetCurrent() + Double(delays[index]) / 1e9
            let timer = CFRunLoopTimerCreateWithHandler(kCFAllocatorDefault, fireDate, 0, 0, 0) { [self] _ in
                recorder.record(signed: Int64(bitPattern: Time.now() &- requested))
                arm(index + 1)
            }
            CFRunLoopAddTimer(loop.ref, timer, CFLoop.mode)
        }
    }

    private func cfOneShot(delays: [UInt64]) -> Recorder {
        let host = CFHost.start()
        let chain = CFChain(loop: host.loop, delays: delays)
        host.loop.perform { chain.arm(0) }
        _ = chain.done.wait()
        host.stop()
        return chain.recorder
    }

    private func cfRepeating(interval: UInt64, seconds: Double) -> Recorder {
        let jitter = Owned(Jitter(interval: interval, seconds: seconds))
        let done = Probe()
        let host = CFHost.start { loop in
            let seconds = Double(interval) / 1e9
            let timer = CFRunLoopTimerCreateWithHandler(
                kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + seconds, seconds, 0, 0
            ) { timer in
                if jitter.value.tick() { CFRunLoopTimerInvalidate(timer); done.signal() }
            }
            CFRunLoopAddTimer(loop.ref, timer, CFLoop.mode)
        }
        _ = done.wait()
        host.stop()
        return jitter.value.recorder
    }
}

// MARK: SwiftNIO

extension TimerScenario {
    /// The NIO version of the chain. `scheduleTask(in: d)` is `scheduleTask(deadline: .now() + d)`;
    /// the chain computes that deadline itself, so that lateness is measured, on NIO's own clock
    /// (`NIODeadline`, CLOCK_MONOTONIC), from exactly the instant the loop was asked for — as
    /// RunLoopKit's is from the `ContinuousClock` instant its timer was given.
    final class NIOChain: @unchecked Sendable {
        // Touched only on the loop thread, then read after `done`.
        let loop: any EventLoop
        let delays: [UInt64]
        let done = Probe()
        var recorder = Recorder()

        init(loop: any EventLoop, delays: [UInt64]) {
            self.loop = loop
            self.delays = delays
        }

        func arm(_ index: Int) {
            guard index < delays.count else { return done.signal() }
            let requested = NIODeadline.now() + .nanoseconds(Int64(delays[index]))
            loop.scheduleTask(deadline: requested) { [self] in
                recorder.record(signed: (NIODeadline.now() - requested).nanoseconds)
                arm(index + 1)
            }
        }
    }

    func nioOneShot(delays: [UInt64]) -> Recorder {
        let host = NIOHost()
        let chain = NIOChain(loop: host.loop, delays: delays)
        host.loop.execute { chain.arm(0) }
        _ = chain.done.wait()
        host.stop()
        return chain.recorder
    }

    /// A 1 ms grid, as the other subjects' repeating timers keep: each task schedules the next
    /// at the grid's next deadline. (`scheduleRepeatedTask` waits its delay after each run ends,
    /// so its ticks drift by each run's lateness: not the same contract.)
    func nioRepeating(interval: UInt64, seconds: Double) -> Recorder {
        let jitter = Owned(Jitter(interval: interval, seconds: seconds))
        let done = Probe()
        let host = NIOHost()
        let loop = host.loop
        @Sendable func tick(_ deadline: NIODeadline) {
            loop.scheduleTask(deadline: deadline) {
                if jitter.value.tick() { done.signal() } else { tick(deadline + .nanoseconds(Int64(interval))) }
            }
        }
        loop.execute { tick(NIODeadline.now() + .nanoseconds(Int64(interval))) }
        _ = done.wait()
        host.stop()
        return jitter.value.recorder
    }
}

/// Records |gap between ticks − interval| until `seconds` have passed since the first tick.
struct Jitter {
    let interval: UInt64
    let seconds: Double
    var recorder = Recorder()
    private var start: UInt64 = 0
    private var last: UInt64 = 0

    init(interval: UInt64, seconds: Double) {
        self.interval = interval
        self.seconds = seconds
    }

    /// Call from each callback; true when the run is over.
    mutating func tick() -> Bool {
        let now = Time.now()
        if last == 0 {
            start = now
        } else {
            recorder.record(nanoseconds: UInt64(abs(Int64(bitPattern: now &- last) - Int64(interval))))
        }
        last = now
        return Double(now - start) / 1e9 >= seconds
    }
}
