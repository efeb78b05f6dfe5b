import ArgumentParser
import Foundation
import RunLoopKit

/// `runloopkit-bench`: measures every backend of the build against CoreFoundation, SwiftNIO,
/// GLib and the floors, in one process run (plus one child process per subject for the
/// main-queue wake and for the idle cost, and one per scenario for each main subject). See Benchmarks/README.md for each scenario's method.
///
/// A synchronous `main` (`ParsableCommand`, not the async kind): the main-queue child runs a
/// main loop on this thread, which an async `main` would have given to `dispatch_main()`.
@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runloopkit-bench",
        abstract:
            "Benchmarks RunLoopKit's backends against CoreFoundation's run loop, SwiftNIO, GLib's main loop and C floors on the bare system calls.",
        discussion:
            "Subjects: \(Subject.all.map(\.description).joined(separator: ", ")). Scenarios: \(ScenarioName.allCases.map(\.rawValue).joined(separator: ", "))."
    )

    /// The children (`runloopkit-bench main-wake …` for the main-queue wake, `idle-cost …` for
    /// the idle scenario, `main-subject …` for a main loop's scenario) are parsed apart, so
    /// that they stay out of the usage text.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == MainWakeChild.configuration.commandName {
            MainWakeChild.main(Array(arguments.dropFirst()))
        } else if arguments.first == IdleChild.configuration.commandName {
            IdleChild.main(Array(arguments.dropFirst()))
        } else if arguments.first == MainSubject.childCommand {
            serveMainSubject(Array(arguments.dropFirst()))
        } else {
            main(arguments)
        }
    }

    @Option(name: .long, parsing: .upToNextOption, help: "Scenarios to run (default: all).")
    var scenarios: [String] = ScenarioName.allCases.map(\.rawValue)

    @Option(
        name: .long, parsing: .upToNextOption,
        help:
            "Subjects: backends of this build, each also as the main loop (epoll-main, …), embeddings, cf, nio, glib, floor (default: all)."
    )
    var subjects: [String] = Subject.all.map(\.description)

    @Flag(name: .long, help: "Small sample counts: the whole run takes about three minutes on 2 CPUs (160 s measured).")
    var quick = false

    @Option(name: .long, help: "wake: samples after warm-up (default 20000; quick 1000).")
    var samples: Int?

    @Option(name: .long, help: "wake: warm-up posts (default 1000; quick 100).")
    var warmup: Int?

    @Option(name: .long, help: "timer: one-shot samples (default 2000; quick 200).")
    var timerSamples: Int?

    @Option(name: .long, help: "throughput: blocks per run (default 1000000; quick 200000).")
    var blocks: Int?

    @Option(name: .long, help: "pass: timed passes (default 1000000; quick 100000).")
    var passes: Int?

    @Option(name: .long, help: "scale: timers (default 1000000; quick 100000).")
    var timers: Int?

    @Option(name: .long, help: "scale: descriptor sources (default 10000).")
    var descriptors: Int?

    @Option(name: .long, help: "scale: one timer's re-arms (default 1000000).")
    var rearms: Int?

    @Option(name: .long, help: "Seed of every random gap, delay and phase.")
    var seed: UInt64 = 0x5EED_2026

    @Flag(
        name: .long, help: "Do not hold /dev/cpu_dma_latency at 0 µs during the wake measurements: let idle CPUs halt.")
    var allowDeepIdle = false

    @Flag(name: .long, help: "Print JSON on standard output instead of the tables.")
    var json = false

    @Option(name: .long, help: "Write a percentile plot of every latency distribution to this SVG file.")
    var svg: String?

    func validate() throws {
        for name in scenarios where ScenarioName(rawValue: name) == nil {
            throw ValidationError(
                "unknown scenario '\(name)'; known: \(ScenarioName.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        for name in subjects where Subject(name: name) == nil {
            throw ValidationError(
                "unknown subject '\(name)'; this build has: \(Subject.all.map(\.description).joined(separator: ", "))")
        }
        for (name, value) in [
            ("samples", samples), ("warmup", warmup), ("timer-samples", timerSamples), ("blocks", blocks),
            ("timers", timers), ("descriptors", descriptors), ("rearms", rearms),
        ] {
            if let value, value < (name == "warmup" ? 0 : 1) {
                throw ValidationError("--\(name) must be positive, not \(value)")
            }
        }
    }

    func run() throws {
        var settings = quick ? Settings.quick : Settings()
        settings.isQuick = quick
        settings.seed = seed
        settings.subjects = Subject.all.filter { subject in subjects.contains { Subject(name: $0) == subject } }
        if let samples { settings.wakeSamples = samples }
        if let warmup { settings.wakeWarmup = warmup }
        if let timerSamples { settings.timerSamples = timerSamples }
        if let blocks { settings.blocks = blocks }
        if let passes { settings.passes = max(passes, 10) }
        if let timers { settings.scaleTimers = max(timers, 10) }
        if let descriptors { settings.scaleDescriptors = max(descriptors, 100) }
        if let rearms { settings.rearms = rearms }
        settings.shallowIdle = !allowDeepIdle

        let context = Context(settings: settings, results: Results(), progress: Progress())
        let machine = Machine.current
        let started = Date()
        // The main subjects of the scenarios that run in a child process per main subject
        // (MainSubject) are measured there, after the others; in such a child, the main subject
        // is this process's and runs here, as it does in the scenarios that do not measure it
        // (which say so).
        let servesMain = MainSubject.loop != nil
        for name in ScenarioName.allCases where scenarios.contains(name.rawValue) {
            let inChildren = !servesMain && MainSubject.runsInChild(name)
            var here = settings
            if inChildren { here.subjects.removeAll(where: \.isMain) }
            let scenario = Context(settings: here, results: context.results, progress: context.progress)
            switch name {
            case .wake: WakeScenario(context: scenario).run()
            case .timer: TimerScenario(context: scenario).run()
            case .throughput: ThroughputScenario(context: scenario).run()
            case .idle: IdleScenario(context: scenario).run()
            case .coalescing: CoalescingScenario(context: scenario).run()
            case .sleepCoalescing: SleepCoalescingScenario(context: scenario).run()
            case .scale: ScaleScenario(context: scenario).run()
            case .pass: PassScenario(context: scenario).run()
            }
            guard inChildren else { continue }
            for subject in settings.subjects where subject.isMain {
                context.progress.show("\(name.rawValue) · \(subject) (in a child process)")
                do {
                    let child = try MainSubject.measure(subject, scenario: name, settings: settings)
                    for measurement in child.results { context.results.append(measurement) }
                    for note in child.notes { context.results.note(note) }
                } catch {
                    context.results.skip(
                        scenario: name.rawValue, variant: "all", subject: subject.description, why: "\(error)")
                }
            }
        }
        context.progress.finish()
        let seconds = Date().timeIntervalSince(started)

        if json {
            print(try JSONReport.render(context.results, machine: machine, settings: settings, seconds: seconds))
        } else {
            print(
                "RunLoopKit benchmark — \(machine.summary); \(quick ? "quick" : "full") run, seed \(seed), \(String(format: "%.1f", seconds)) s"
            )
            for note in context.results.notes { print("note: \(note)") }
            print(Table.render(context.results))
            print(Targets.render(context.results))
        }
        if let svg {
            let title = "RunLoopKit latency percentiles — \(machine.summary)"
            try SVGPlot.render(context.results, title: title).write(toFile: svg, atomically: true, encoding: .utf8)
            FileHandle.standardError.write(Data("wrote \(svg)\n".utf8))
        }
    }
}

extension Bench {
    /// A main-subject child (`runloopkit-bench main-subject OPTIONS`): this process's main
    /// thread serves the main loop of the one subject named, while a pthread runs the harness
    /// with OPTIONS (which include `--json`), as `MainSubject` describes.
    static func serveMainSubject(_ arguments: [String]) {
        do {
            let command = try parse(arguments)
            // Other subjects may run beside it, in this process (to compare like with like).
            let mains = command.subjects.compactMap(Subject.init(name:)).filter(\.isMain)
            guard mains.count == 1, case let .main(kind) = mains[0] else {
                throw ChildProcess.Failure(description: "main-subject: name exactly one main subject")
            }
            try MainSubject.serve(kind) {
                do {
                    try command.run()
                } catch {
                    print("error \(error)")
                }
                // Ends the child here, whatever the main thread is doing: a main loop left
                // blocked (a lost wake's probe, say) must not keep the output from the parent.
                // Every output stream: `stdout` itself is a C global Swift 6 will not read here.
                fflush(nil)
                // No atexit handlers or stdio teardown while the main thread is inside the run.
                _exit(0)
            }
        } catch {
            print("error \(error)")
            Glibc.exit(1)
        }
    }
}

/// The child of the main-queue wake: this process's main thread runs `subject`'s main
/// loop while a pthread drives it; the samples go to standard output, one a line.
struct MainWakeChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "main-wake",
        abstract: "Internal: the child process of wake/dispatch-main."
    )

    @Option(name: .long) var subject: String
    @Option(name: .long) var samples: Int
    @Option(name: .long) var warmup: Int
    @Option(name: .long) var seed: UInt64

    func run() throws {
        guard let subject = Subject(name: subject) else { throw ValidationError("unknown subject '\(self.subject)'") }
        MainWake.child(subject, samples: samples, warmup: warmup, seed: seed)
    }
}

/// The child of the idle scenario (`runloopkit-bench idle-cost …`): `subject` idles alone in
/// this process; its figures go to standard output.
struct IdleChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle-cost",
        abstract: "Internal: the child process of the idle scenario."
    )

    @Option(name: .long) var subject: String
    @Option(name: .long) var seconds: Double

    func run() throws {
        guard let subject = Subject(name: subject) else { throw ValidationError("unknown subject '\(self.subject)'") }
        IdleScenario.child(subject, seconds: seconds)
    }
}
