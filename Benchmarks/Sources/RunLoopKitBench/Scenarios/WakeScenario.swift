import CoreFoundation
import Glibc
import RunLoopKit

/// **wake** — how long an idle loop takes to run work posted from another thread.
///
/// The loop sleeps in its wait. The driver (this thread) records t0 and posts; the loop thread
/// records t1 when the work runs. The driver waits for it (blocked on a semaphore), then
/// sleeps a seeded random 50–500 µs so that the loop is back asleep before the next post.
enum WakeVariant: String, CaseIterable {
    /// `Loop.perform` / `CFRunLoopPerformBlock` + `CFRunLoopWakeUp` / an eventfd write.
    case perform
    /// `signal()` on a version-0 source (CF: `CFRunLoopSourceSignal` + `CFRunLoopWakeUp`).
    case signal
    /// A write to an eventfd watched by a version-1 source.
    case descriptor
    // `case mainQueue` (DispatchQueue.main.async onto `Loop.main`) slots in here once Core
    // drains the main queue: it needs one arm in `poster(for:)` below, and the driver moved off
    // the main thread (the main loop must run there). See Benchmarks/README.md.
}

struct WakeScenario {
    let context: Context

    func run() {
        let settings = context.settings
        let total = settings.wakeWarmup + settings.wakeSamples
        let gaps = SplitMix64.draws(total, in: 50_000...500_000, seed: settings.seed, stream: 1)
        for variant in WakeVariant.allCases {
            for subject in settings.subjects {
                context.progress.show("wake/\(variant.rawValue) · \(subject)")
                do {
                    guard let session = try poster(for: subject, variant) else {
                        context.results.skip(scenario: "wake", variant: variant.rawValue, subject: subject.description,
                                             why: "CoreFoundation on Linux has no public descriptor source")
                        continue
                    }
                    let recorder = drive(session, gaps: gaps, warmup: settings.wakeWarmup)
                    session.stop()
                    context.results.add(latency: recorder, scenario: "wake", variant: variant.rawValue, subject: subject.description)
                } catch {
                    context.results.skip(scenario: "wake", variant: variant.rawValue, subject: subject.description, why: "\(error)")
                }
            }
        }
    }

    /// A posting session: `post` makes the loop run `probe.mark()` once.
    struct Session {
        let probe: Probe
        let post: () -> Void
        let stop: () -> Void
    }

    /// Posts, waits, records, sleeps: the same sequence of gaps for every subject.
    private func drive(_ session: Session, gaps: [UInt64], warmup: Int) -> Recorder {
        var recorder = Recorder()
        for (index, gap) in gaps.enumerated() {
            let t0 = Time.now()
            session.post()
            let t1 = session.probe.wait()
            if index >= warmup { recorder.record(nanoseconds: t1 &- t0) }
            Time.sleep(nanoseconds: gap)
        }
        return recorder
    }

    /// Sets up `subject` for `variant`; nil when the subject cannot do it.
    private func poster(for subject: Subject, _ variant: WakeVariant) throws -> Session? {
        let probe = Probe()
        switch (subject, variant) {
        case let (.kit(kind), .perform):
            let host = try KitHost.start(kind)
            let loop = host.loop
            return Session(probe: probe, post: { loop.perform { probe.mark() } }, stop: host.stop)
        case let (.kit(kind), .signal):
            let source = Loop.Source { probe.mark() }
            let host = try KitHost.start(kind) { $0.add(source, to: .default) }
            return Session(probe: probe, post: { source.signal() }, stop: host.stop)
        case let (.kit(kind), .descriptor):
            let fd = FD.eventfd()
            let source = try Loop.Source(fileDescriptor: fd) { _ in
                FD.drain(fd)
                probe.mark()
            }
            let host = try KitHost.start(kind) { $0.add(source, to: .default) }
            return Session(probe: probe, post: { FD.signal(fd) }, stop: {
                source.invalidate()
                host.stop()
                close(fd)
            })
        case (.coreFoundation, .perform):
            let host = CFHost.start()
            let loop = host.loop
            return Session(probe: probe, post: { loop.perform { probe.mark() } }, stop: host.stop)
        case (.coreFoundation, .signal):
            let source = CFSignalSource { probe.mark() }
            let host = CFHost.start { source.add(to: $0) }
            let loop = host.loop
            return Session(probe: probe, post: { source.signal(loop) }, stop: {
                source.invalidate()
                host.stop()
            })
        case (.coreFoundation, .descriptor):
            return nil
        case (.floor, _):
            // Every variant is the same on the floor: an eventfd write wakes epoll_pwait2.
            let floor = FloorLoop { probe.mark() }
            let fd = floor.wakeDescriptor
            return Session(probe: probe, post: { FD.signal(fd) }, stop: floor.stop)
        }
    }
}
