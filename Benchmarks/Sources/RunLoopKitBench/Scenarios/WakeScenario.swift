import CBenchGLibSources
import CoreFoundation
import Dispatch
import Glibc
import NIOCore
import NIOPosix
import RunLoopKit

/// **wake** — how long an idle loop takes to run work posted from another thread.
///
/// The loop sleeps in its wait. The driver records t0 and posts; the loop thread records t1
/// when the work runs. Between posts the driver lets a seeded random 50–500 µs pass and checks
/// the loop is asleep again. The spinning driver (see `WakeDriver`) makes the primary figures;
/// `perform-blocking` repeats `perform` with the blocking driver. Subjects take their samples
/// in interleaved rounds (see `rounds`).
enum WakeVariant: String, CaseIterable {
    /// `Loop.perform` / `CFRunLoopPerformBlock` + `CFRunLoopWakeUp` / NIO's `execute` / an
    /// eventfd write.
    case perform
    /// `signal()` on a version-0 source (CF: `CFRunLoopSourceSignal` + `CFRunLoopWakeUp`).
    case signal
    /// A write to an eventfd watched by a version-1 source (NIO: a pipe channel on it).
    case descriptor
    /// `DispatchQueue.main.async` onto the main loop (`Loop.main`, CF's `RunLoop.main`), in a
    /// child process per subject whose main thread runs the loop (see MainWake.swift).
    case dispatchMain = "dispatch-main"
    /// `perform` again, with the blocking driver: a semaphore and `nanosleep`.
    case performBlocking = "perform-blocking"

    /// The variants the targets hold to the floor and to NIO (the spinning driver's): the
    /// issue's posted work, `signal()` and descriptor wakes. `dispatch-main` is shown in its
    /// table only (NIO does not serve the main queue).
    static var targeted: [WakeVariant] { [.perform, .signal, .descriptor] }
}

struct WakeScenario {
    let context: Context

    func run() {
        context.withShallowIdle("wake") { measure() }
    }

    /// Each variant's samples are taken in this many rounds, every subject taking its share
    /// in turn in each round, so that a machine that drifts during the run (a neighbour on the
    /// host, a frequency change) shifts every subject alike: ratios within a run compare like
    /// with like. Measured one after another instead, two runs of the same floor minutes apart
    /// differed by 1.5×.
    static let rounds = 10
    /// Posts discarded at the start of each round after the first: the loop has been idle
    /// while the other subjects took their turn.
    static let roundWarmup = 20

    private func measure() {
        let settings = context.settings
        let total = settings.wakeWarmup + settings.wakeSamples
        let gaps = Self.gaps(total, seed: settings.seed)
        for variant in WakeVariant.allCases {
            if variant == .dispatchMain {
                measureMainQueue(settings)
                continue
            }
            // Every subject's session lives for the whole variant; the driver posts to one at
            // a time.
            var sessions: [(subject: Subject, session: Session, probe: Probe, run: WakeDriver.Run)] = []
            for subject in settings.subjects {
                let probe = Probe(blocking: variant == .performBlocking)
                do {
                    guard let session = try poster(for: subject, variant, probe: probe) else {
                        skip(variant, subject, Self.unsupported(subject, variant))
                        continue
                    }
                    sessions.append((subject, session, probe, WakeDriver.Run()))
                } catch {
                    skip(variant, subject, "\(error)")
                }
            }
            let share = max(settings.wakeSamples / Self.rounds, 1)
            for round in 0..<Self.rounds {
                let warmup = round == 0 ? settings.wakeWarmup : Self.roundWarmup
                let first = round == 0 ? 0 : settings.wakeWarmup + round * share - warmup
                let last = round == Self.rounds - 1 ? total : settings.wakeWarmup + (round + 1) * share
                let slice = Array(gaps[max(first, 0)..<min(last, total)])
                for index in sessions.indices where !sessions[index].run.lost {
                    let (subject, session, probe, _) = sessions[index]
                    context.progress.show(
                        "wake/\(variant.rawValue) · \(subject) (round \(round + 1) of \(Self.rounds))")
                    let part =
                        variant == .performBlocking
                        ? WakeDriver.blocking(probe, gaps: slice, warmup: warmup, post: { _ in session.post() })
                        : WakeDriver.spinning(probe, gaps: slice, warmup: warmup, post: { _ in session.post() })
                    sessions[index].run.samples += part.samples
                    sessions[index].run.awakeAtPost += part.awakeAtPost
                    sessions[index].run.lost = part.lost
                }
            }
            for (subject, session, _, run) in sessions {
                // A lost post leaves its loop blocked in the harness's probe: not stopped.
                if !run.lost { session.stop() }
                record(run, variant, subject)
            }
        }
    }

    /// The `DispatchQueue.main` wake: a child process per subject (its main thread must run
    /// the loop), one after another.
    private func measureMainQueue(_ settings: Settings) {
        // In a main-subject child the parent has measured these already (each backend's row is
        // its main loop): only the main subject's row, saying so.
        if MainSubject.loop != nil {
            for subject in settings.subjects where subject.isMain {
                skip(.dispatchMain, subject, Self.unsupported(subject, .dispatchMain))
            }
            return
        }
        for subject in settings.subjects {
            context.progress.show("wake/\(WakeVariant.dispatchMain.rawValue) · \(subject)")
            if subject == .nio {
                skip(.dispatchMain, subject, "a NIO event loop does not serve DispatchQueue.main")
                continue
            }
            switch subject {
            case .glib, .embedded, .main:
                skip(.dispatchMain, subject, Self.unsupported(subject, .dispatchMain))
                continue
            case .kit, .coreFoundation, .nio, .floor:
                break
            }
            do {
                record(try MainWake.runChild(subject, settings: settings), .dispatchMain, subject)
            } catch {
                skip(.dispatchMain, subject, "\(error)")
            }
        }
    }

    /// The gaps before each post: the same seeded sequence for every subject and variant (the
    /// main-queue child process draws it again from the same seed).
    static func gaps(_ count: Int, seed: UInt64) -> [UInt64] {
        SplitMix64.draws(count, in: 50_000...500_000, seed: seed, stream: 1)
    }

    private func record(_ run: WakeDriver.Run, _ variant: WakeVariant, _ subject: Subject) {
        if run.lost {
            context.progress.warn("wake/\(variant.rawValue) · \(subject): a post did not run within 10 s")
            skip(variant, subject, "a post did not run within 10 s (lost wake)")
            return
        }
        if run.awakeAtPost > 0 {
            context.progress.warn(
                "wake/\(variant.rawValue) · \(subject): \(run.awakeAtPost) posts found the loop thread not asleep")
        }
        var recorder = Recorder()
        for sample in run.samples { recorder.record(nanoseconds: sample) }
        let note = variant == .performBlocking ? "blocking driver: semaphore + nanosleep" : "spinning driver"
        context.results.add(
            latency: recorder, scenario: "wake", variant: variant.rawValue, subject: subject.description, note: note,
            metrics: [Metric(name: "posts to an awake loop", value: Double(run.awakeAtPost), unit: "posts")])
    }

    private func skip(_ variant: WakeVariant, _ subject: Subject, _ why: String) {
        context.results.skip(scenario: "wake", variant: variant.rawValue, subject: subject.description, why: why)
    }

    private static func unsupported(_ subject: Subject, _ variant: WakeVariant) -> String {
        switch (subject, variant) {
        case (.coreFoundation, .descriptor): "CoreFoundation on Linux has no public descriptor source"
        case (.nio, .signal): "NIO has no signalled source; execute is its cross-thread wake (see perform)"
        case (.glib, .dispatchMain): "a GMainLoop alone does not serve DispatchQueue.main"
        case (.embedded, .dispatchMain): "the main-queue child's main loop runs itself, not embedded in GLib's"
        case (.main, .dispatchMain): "the backend's own row is this figure: its main-queue child runs Loop.main"
        default: "not supported"
        }
    }

    /// A posting session: `post` makes the loop run `probe.mark()` once.
    struct Session {
        let post: () -> Void
        let stop: () -> Void
    }

    /// Sets up `subject` for `variant`; nil when the subject cannot do it.
    private func poster(for subject: Subject, _ variant: WakeVariant, probe: Probe) throws -> Session? {
        switch (subject, variant) {
        case (.kit, .perform), (.kit, .performBlocking), (.main, .perform), (.main, .performBlocking),
            (.embedded, .perform), (.embedded, .performBlocking):
            let host = try KitHost.start(subject)
            let loop = host.loop
            return Session(post: { loop.perform { probe.mark() } }, stop: host.stop)
        case (.kit, .signal), (.main, .signal), (.embedded, .signal):
            let source = Loop.Source { probe.mark() }
            let host = try KitHost.start(subject) { $0.add(source, to: .default) }
            return Session(
                post: { source.signal() },
                stop: {
                    // Out of the loop before it stops: the main loop goes on running.
                    source.invalidate()
                    host.stop()
                })
        case (.kit, .descriptor), (.main, .descriptor), (.embedded, .descriptor):
            let fd = FD.eventfd()
            let source = try Loop.Source(fileDescriptor: fd) { _ in
                FD.drain(fd)
                probe.mark()
            }
            let host = try KitHost.start(subject) { $0.add(source, to: .default) }
            return Session(
                post: { FD.signal(fd) },
                stop: {
                    source.invalidate()
                    host.stop()
                    close(fd)
                })
        case (.coreFoundation, .perform), (.coreFoundation, .performBlocking):
            let host = CFHost.start()
            let loop = host.loop
            return Session(post: { loop.perform { probe.mark() } }, stop: host.stop)
        case (.coreFoundation, .signal):
            let source = CFSignalSource { probe.mark() }
            let host = CFHost.start { source.add(to: $0) }
            let loop = host.loop
            return Session(
                post: { source.signal(loop) },
                stop: {
                    source.invalidate()
                    host.stop()
                })
        case (.nio, .perform), (.nio, .performBlocking):
            let host = NIOHost()
            let loop = host.loop
            return Session(post: { loop.execute { probe.mark() } }, stop: host.stop)
        case (.nio, .descriptor):
            // A pipe channel over the eventfd: NIO reads it (8 bytes) and fires channelRead.
            let host = NIOHost()
            let fd = FD.eventfd()
            let channel = try NIOPipeBootstrap(group: host.group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(MarkOnRead(probe: probe))
                    }
                }
                .takingOwnershipOfDescriptor(input: fd)
                .wait()
            return Session(
                post: { FD.signal(fd) },
                stop: {
                    try? channel.close().wait() // closes the eventfd, which the channel owns
                    host.stop()
                })
        case (.glib, .perform), (.glib, .performBlocking):
            let host = GLibHost.start()
            let main = host.main
            return Session(post: { main.perform { probe.mark() } }, stop: host.stop)
        case (.glib, .signal):
            // A GSource ready while its flag is set: raised with the flag and
            // g_main_context_wakeup, as CF's signal pairs with CFRunLoopWakeUp.
            let box = Unmanaged.passRetained(probe)
            let source = Owned<UnsafeMutableRawPointer?>(nil)
            let host = GLibHost.start { main in
                source.value = cbench_glib_signal_source(
                    UnsafeMutableRawPointer(main.context), GLibMark.mark, box.toOpaque())
            }
            // Set on the loop's thread before `start` returned (its hand-over orders memory).
            let raised = GLibSourceRef(source.value!)
            return Session(
                post: { cbench_glib_signal_raise(raised.pointer) },
                stop: {
                    host.onLoop { cbench_glib_source_remove(raised.pointer) }
                    host.stop()
                    box.release()
                })
        case (.glib, .descriptor):
            // g_unix_fd_source_new on the eventfd; the callback reads it, then marks.
            let fd = FD.eventfd()
            let reader = Unmanaged.passRetained(DrainAndMark(fd: fd, probe: probe))
            let source = Owned<UnsafeMutableRawPointer?>(nil)
            let host = GLibHost.start { main in
                source.value = cbench_glib_descriptor_source(
                    UnsafeMutableRawPointer(main.context), fd, DrainAndMark.call, reader.toOpaque())
            }
            let watched = GLibSourceRef(source.value!)
            return Session(
                post: { FD.signal(fd) },
                stop: {
                    host.onLoop { cbench_glib_source_remove(watched.pointer) }
                    host.stop()
                    reader.release()
                    close(fd)
                })
        case (.floor, .perform), (.floor, .performBlocking):
            // The C queue of the throughput floor: a function pointer appended under a mutex,
            // the eventfd written because the consumer announced it sleeps.
            let queue = try FloorQueue()
            let context = Unmanaged.passUnretained(probe).toOpaque()
            return Session(post: { queue.post(FloorMark.mark, context) }, stop: queue.stop)
        case (.floor, .signal), (.floor, .descriptor):
            // A C loop on one eventfd: a doorbell (mark, then reset) for a signal; read, then
            // mark for a descriptor source's handler.
            let floor = try FloorLoop(probe: probe, readFirst: variant == .descriptor)
            let fd = floor.wakeDescriptor
            return Session(post: { FD.signal(fd) }, stop: floor.stop)
        default:
            return nil
        }
    }
}

/// Marks the probe for each read of a NIO pipe channel.
final class MarkOnRead: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let probe: Probe
    init(probe: Probe) { self.probe = probe }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { probe.mark() }
}

/// A GLib source pointer handed from the loop's thread to the driver (GLib's raise and
/// destroy calls are thread-safe).
struct GLibSourceRef: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
}

/// The GLib signalled source's callback: marks the probe passed as its data.
enum GLibMark {
    static let mark: cbench_glib_callback = { data in
        Unmanaged<Probe>.fromOpaque(data!).takeUnretainedValue().mark()
    }
}

/// The GLib descriptor source's callback: reads the eventfd (level-triggered), then marks.
final class DrainAndMark: Sendable {
    let fd: Int32
    let probe: Probe
    init(fd: Int32, probe: Probe) {
        self.fd = fd
        self.probe = probe
    }

    static let call: cbench_glib_callback = { data in
        let reader = Unmanaged<DrainAndMark>.fromOpaque(data!).takeUnretainedValue()
        FD.drain(reader.fd)
        reader.probe.mark()
    }
}
