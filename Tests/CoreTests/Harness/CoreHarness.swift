import Glibc
import RunLoopKit

/// Runs a program on a real loop (Core) over a ``ScriptedBackend`` and a ``VirtualClock``,
/// and records what happens in the trace format the model predicts.
///
/// Callouts record themselves and do what the ``Script`` says, through the public API.
final class CoreHarness: @unchecked Sendable {
    // @unchecked: used only on the thread that runs the program, which is the loop's own
    // thread; Core calls every item callback on that thread too.
    private let program: Program
    private var script: Script
    private let clock = VirtualClock()
    private let backend: ScriptedBackend
    private let loop: Loop
    private var sources: [Loop.Source] = []
    /// The version-1 sources, each on the read end of a pipe of its own (`pipes`).
    private var descriptorSources: [Loop.Source] = []
    private var pipes: [(read: Int32, write: Int32)] = []
    private var timers: [Loop.Timer] = []
    private var observers: [Loop.Observer] = []
    /// Added to the loop at least once (see `Model.setFireInstant`).
    private var timerBound: [Bool]
    private var depth = 0
    private var blockCount = 0
    private var events: [String] = []
    private var membershipEvents: [String] = []

    /// Runs `program` on a new loop bound to the calling thread, which must have none (a
    /// fresh thread: the loop is torn down when it exits).
    static func run(_ program: Program) -> Trace {
        let harness = CoreHarness(program: program)
        var trace = harness.runSteps()
        harness.breakCycles()
        // Every descriptor source is invalidated now: none of their descriptors may be left in
        // the backend (D7). The model predicts no such step, so a leftover is a difference.
        let left = harness.backend.registeredCount
        if left > 0 {
            trace.steps.append(["backend: descriptors still registered after their sources were invalidated: \(left)"])
        }
        return trace
    }

    private init(program: Program) {
        self.program = program
        script = Script(program: program)
        backend = ScriptedBackend(clock: clock)
        loop = Loop.makeBoundToCurrentThread(backend: backend, clock: clock.loopClock)
        timerBound = program.timers.map { _ in false }
        makeItems()
        backend.onEndlessWait = { [weak self] in self?.endlessSleep() }
        backend.onSleep = { [weak self] timeout in
            guard let self else { return }
            log(TraceFormat.sleep(until: clock.nanoseconds + timeout.nanosecondsRoundedUp))
        }
    }

    private func makeItems() {
        sources = program.sources.indices.map { index in
            Loop.Source(
                order: program.sources[index].order,
                schedule: { [weak self] _, mode in
                    self?.membershipEvents.append("schedule s\(index) \(ModeName.name(of: mode))")
                },
                cancel: { [weak self] _, mode in
                    self?.membershipEvents.append("cancel s\(index) \(ModeName.name(of: mode))")
                },
                perform: { [weak self] in self?.callout(.source(index), "source s\(index)") }
            )
        }
        pipes = program.descriptors.indices.map { _ in
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { fatalError("cannot make a pipe: errno \(errno)") }
            // Kept from the child processes other suites start meanwhile (they would hold it open).
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            return (ends[0], ends[1])
        }
        descriptorSources = program.descriptors.indices.map { index in
            let spec = program.descriptors[index]
            do {
                return try Loop.Source(
                    fileDescriptor: pipes[index].read, interest: spec.interest.interest, order: spec.order
                ) { [weak self] readiness in
                    self?.callout(.descriptor(index), "source d\(index) \(readiness)")
                }
            } catch {
                fatalError("a generated descriptor source was refused: \(error)")
            }
        }
        timers = program.timers.indices.map { index in
            let spec = program.timers[index]
            do {
                return try Loop.Timer(
                    fireAt: clock.instant(milliseconds: spec.fireAt), interval: spec.interval.map { .milliseconds($0) },
                    tolerance: .milliseconds(spec.tolerance), order: spec.order
                ) { [weak self] timer in
                    guard let self else { return }
                    // Inside the callback the timer reads the instant being served.
                    callout(.timer(index), "timer t\(index) @\(clock.format(timer.nextFireInstant))")
                }
            } catch {
                fatalError("a generated timer was refused: \(error)")
            }
        }
        observers = program.observers.indices.map { index in
            let spec = program.observers[index]
            return Loop.Observer(
                activities: Loop.Activity(spec.activities.map(\.activity)), repeats: spec.repeats, order: spec.order
            ) {
                [weak self] _, activity in self?.callout(.observer(index), "observer o\(index) \(activity)")
            }
        }
    }

    /// Items hold callbacks that reach this harness; the loop holds the items until its
    /// thread exits.
    private func breakCycles() {
        for source in sources { source.invalidate() }
        // Invalidated first: a descriptor leaves the backend before it is closed (D7).
        for source in descriptorSources { source.invalidate() }
        for (read, write) in pipes {
            close(read)
            close(write)
        }
        for timer in timers { timer.invalidate() }
        for observer in observers { observer.invalidate() }
    }

    private func runSteps() -> Trace {
        var trace = Trace()
        for step in program.steps {
            script.beginStep()
            execute(step)
            events += backend.takeProblems()
            events.append(stateLine())
            trace.steps.append(events)
            events = []
        }
        return trace
    }

    private func log(_ event: String) {
        events.append("\(clock.formattedNow) \(event)")
    }

    private func callout(_ item: ItemRef, _ event: String) {
        log("\(event) in \(currentMode)")
        execute(script.nextAction(of: item))
    }

    private func execute(_ action: Action) {
        switch action {
        case .none: break
        case let .add(item, mode):
            switch item {
            case let .source(index): loop.add(sources[index], to: mode.loopMode)
            case let .descriptor(index): loop.add(descriptorSources[index], to: mode.loopMode)
            case let .timer(index):
                if timers[index].isValid { timerBound[index] = true }
                loop.add(timers[index], to: mode.loopMode)
            case let .observer(index): loop.add(observers[index], to: mode.loopMode)
            }
        case let .remove(item, mode):
            switch item {
            case let .source(index): loop.remove(sources[index], from: mode.loopMode)
            case let .descriptor(index): loop.remove(descriptorSources[index], from: mode.loopMode)
            case let .timer(index): loop.remove(timers[index], from: mode.loopMode)
            case let .observer(index): loop.remove(observers[index], from: mode.loopMode)
            }
        case let .invalidate(item):
            switch item {
            case let .source(index): sources[index].invalidate()
            case let .descriptor(index): descriptorSources[index].invalidate()
            case let .timer(index): timers[index].invalidate()
            case let .observer(index): observers[index].invalidate()
            }
        case let .signal(index): sources[index].signal()
        case let .signalDescriptor(index): descriptorSources[index].signal()
        case let .setFireInstant(index, fromNow):
            // An unbound timer would read the real clock: left alone, as in the model.
            if timerBound[index] { timers[index].nextFireInstant = clock.now + .milliseconds(fromNow) }
        case let .setTolerance(index, milliseconds):
            do {
                try timers[index].setTolerance(.milliseconds(milliseconds))
            } catch {
                fatalError("a generated tolerance was refused: \(error)")
            }
        case let .setReadiness(index, readiness):
            backend.setReadiness(Readiness(readiness.map(\.readiness)), of: pipes[index].read)
        case let .perform(modes, action):
            blockCount += 1
            let id = blockCount
            loop.perform(in: Set(modes.map(\.loopMode))) { [weak self] in
                guard let self else { return }
                log("block b\(id) in \(currentMode)")
                execute(script.blockAction(action))
            }
        case let .run(mode, timeout, once):
            guard depth < Limits.runDepth else { break }
            log("run \(mode)")
            depth += 1
            let result = loop.run(
                mode.loopMode, timeout: timeout.map { .milliseconds($0) }, returnAfterSourceHandled: once)
            depth -= 1
            log("run \(mode) -> \(result)")
        case .stop: loop.stop()
        case .wakeUp: loop.wakeUp()
        case let .addCommonMode(mode): loop.addCommonMode(mode.loopMode)
        case let .advanceClock(milliseconds): clock.advance(by: .milliseconds(milliseconds))
        }
        for event in membershipEvents.sorted() { log(event) }
        membershipEvents = []
    }

    private var currentMode: String { loop.currentMode.map(ModeName.name(of:)) ?? "no mode" }

    /// A wait without a timeout would never end: do what another thread would, stop the loop,
    /// which wakes it.
    private func endlessSleep() {
        log(Model.endlessSleep)
        loop.stop()
    }

    /// The observable state, read through the public API.
    private func stateLine() -> String {
        func modes(_ contains: (Loop.Mode) -> Bool) -> [ModeName] { ModeName.allCases.filter { contains($0.loopMode) } }
        let items: [TraceFormat.ItemState] =
            sources.indices.map { index in
                let source = sources[index]
                return TraceFormat.source(
                    index, valid: source.isValid, signalled: source.isSignalled,
                    modes: modes { loop.contains(source, in: $0) })
            }
            + descriptorSources.indices.map { index in
                let source = descriptorSources[index]
                return .init(
                    name: "d\(index)", valid: source.isValid, detail: source.isSignalled ? "signalled" : nil,
                    modes: modes { loop.contains(source, in: $0) })
            }
            + timers.indices.map { index in
                let timer = timers[index]
                return .init(
                    name: "t\(index)", valid: timer.isValid,
                    detail: TraceFormat.timerDetail(
                        next: clock.nanoseconds(of: timer.nextFireInstant),
                        tolerance: timer.tolerance.nanosecondsRoundedUp),
                    modes: modes { loop.contains(timer, in: $0) })
            }
            + observers.indices.map { index in
                let observer = observers[index]
                return .init(
                    name: "o\(index)", valid: observer.isValid, detail: nil,
                    modes: modes { loop.contains(observer, in: $0) })
            }
        let common = loop.commonModes.compactMap { mode in ModeName.concrete.first { $0.loopMode == mode } }
        return TraceFormat.state(commonModes: common, items: items)
    }
}
