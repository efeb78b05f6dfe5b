import Foundation
import Glibc
import RunLoopKit
import Synchronization

/// A backend's loop as `Loop.main` (the `…-main` subjects), measured as a program that runs
/// its main loop on its main thread has it.
///
/// A process has one main loop, of one backend kind, on one thread, and it never ends; so each
/// main subject is measured in a child process of its own, one per scenario: the harness runs
/// itself again as `runloopkit-bench main-subject --scenarios S --subjects K K-main --json …`
/// (the parent's settings passed on). In the child the main thread serves `Loop.main`
/// (``serve(_:driver:)``) while a pthread runs the scenario, which reaches the main loop
/// through `KitHost.start(_:setup:)` as it reaches any loop; the child prints its
/// measurements as JSON and the parent adds them to its own (``measure(_:scenario:settings:)``).
///
/// A main subject's figures are taken after the other subjects', not interleaved in rounds
/// with them, and this VM drifts by up to 2× within minutes (a wake p50 of 4.2 µs in one
/// stretch, 11 µs in the next, floor included). So the child measures, interleaved with the
/// main loop in the same rounds of the same process:
/// - the same backend's loop on a thread, reported as ``besideMain(_:)``: the main area holds
///   the main loop to it;
/// - the references the scenario's targets compare with (``references(for:among:)``: the C
///   floor, NIO, CF), reported as ``reference(_:besideMain:)`` (`nio@epoll-main`): the wake,
///   timer and throughput targets hold the main loop to these, not to the parent's figures
///   taken minutes earlier.
enum MainSubject {
    /// The scenarios whose main subjects run in a child process each (``measure(_:scenario:settings:)``).
    /// The idle scenario starts a child for every subject anyway and measures a main subject
    /// there (`IdleScenario`). The others do not measure the main loop (saying why,
    /// ``unmeasuredReason``): they add items to a loop for each measurement and rely on the
    /// loop's end to take them out, and the main loop does not end.
    static func runsInChild(_ scenario: ScenarioName) -> Bool {
        switch scenario {
        case .wake, .timer, .throughput: true
        case .idle, .coalescing, .sleepCoalescing, .scale, .pass: false
        }
    }

    static let unmeasuredReason =
        "the scenario adds items to a loop for each measurement and needs the loop's end to take them out; the main loop does not end"

    // MARK: the parent

    /// Runs `scenario` for the main subject `subject` in a child process and returns its
    /// report: its measurements and notes. Latency histograms do not cross (the JSON holds
    /// their summaries), so the `--svg` plot has no main subject. The idle scenario is not run this way: it starts a child for every
    /// subject anyway (see `IdleScenario`).
    static func measure(_ subject: Subject, scenario: ScenarioName, settings: Settings) throws -> JSONReport.Document {
        guard case let .main(kind) = subject else {
            preconditionFailure("MainSubject: \(subject) is not a main subject")
        }
        let thread = Subject.kit(kind)
        let references = references(for: scenario, among: settings.subjects)
        var arguments = [
            childCommand, "--scenarios", scenario.rawValue, "--subjects", thread.description, subject.description,
        ]
        arguments += references.map(\.description)
        arguments += [
            "--json",
            "--seed", "\(settings.seed)", "--samples", "\(settings.wakeSamples)", "--warmup",
            "\(settings.wakeWarmup)", "--timer-samples", "\(settings.timerSamples)", "--blocks", "\(settings.blocks)",
        ]
        if settings.isQuick { arguments.append("--quick") }
        if !settings.shallowIdle { arguments.append("--allow-deep-idle") }
        let lines = try ChildProcess.run(arguments)
        var document = try JSONDecoder().decode(
            JSONReport.Document.self, from: Data(lines.joined(separator: "\n").utf8))
        for index in document.results.indices where document.results[index].subject != subject.description {
            let name = document.results[index].subject
            document.results[index].subject =
                name == thread.description ? besideMain(kind) : reference(name, besideMain: subject.description)
        }
        return document
    }

    /// The references whose figures `scenario`'s targets compare a backend with, those of
    /// `subjects` (a run that measures no NIO has no NIO beside the main loop either).
    static func references(for scenario: ScenarioName, among subjects: [Subject]) -> [Subject] {
        let wanted: [Subject] =
            switch scenario {
            case .wake: [.floor, .nio]
            case .timer: [.coreFoundation, .nio]
            case .throughput: [.floor]
            case .idle, .coalescing, .sleepCoalescing, .scale, .pass: []
            }
        return wanted.filter(subjects.contains)
    }

    /// The name under which a main-subject child reports a reference's row `name` (`nio`,
    /// `floor-timerfd`) measured beside the main subject `main`: `nio@epoll-main`.
    static func reference(_ name: String, besideMain main: String) -> String { name + "@" + main }

    /// The name under which a main-subject child reports the backend's loop on a thread,
    /// measured in the same rounds as the main loop (`epoll-beside-main`).
    static func besideMain(_ kind: BackendKind) -> String { Subject.name(of: kind) + "-beside-main" }

    /// The child's command name: `runloopkit-bench main-subject ARGUMENTS`, where ARGUMENTS
    /// are the harness's own options.
    static let childCommand = "main-subject"

    // MARK: the child

    /// The main loop this process's main thread serves, once ``serve(_:driver:)`` made it;
    /// `nil` in a process that serves none (the parent).
    static var loop: Loop? { served.withLock { $0 } }
    private static let served = Mutex<Loop?>(nil)

    /// Makes `Loop.main` on `kind` (the calling thread must be the main thread), starts
    /// `driver` on a pthread and runs the main loop in `.default` until `driver` returns (the
    /// `main-subject` child's driver ends the process instead; the idle child's returns).
    static func serve(_ kind: BackendKind, driver: @escaping @Sendable () -> Void) throws {
        let loop = try Loop.current(backend: kind)
        guard loop === Loop.main else {
            throw ChildProcess.Failure(description: "main-subject: Loop.current on the main thread is not Loop.main")
        }
        served.withLock { $0 = loop }
        // Keeps `.default` from being empty (an empty mode's run returns at once) and ends the
        // serving from inside a run when signalled, so the signal cannot be missed between runs.
        let finished = Atomic<Bool>(false)
        let done = Loop.Source {
            finished.store(true, ordering: .relaxed)
            loop.stop()
        }
        loop.add(done, to: .default)
        let thread = PThread {
            driver()
            done.signal()
        }
        while !finished.load(ordering: .relaxed) { loop.run(.default) }
        thread.join()
        done.invalidate()
    }
}
