/// The behaviour contract restated as a small interpreter: what a loop does with a program's steps, and
/// the events it should produce.
///
/// It is deliberately independent of Core: plain values, integer nanoseconds, no locks,
/// no queues of timer entries, no registrations. Items and blocks are updated in place, and
/// each rule is written the way the contract words it. Ports and other threads are left out
/// (see README.md). The run itself is in `Model+Run.swift`.
///
/// Where the contract leaves a choice to the loop (when, within the tolerance windows, a
/// sleep ends), the model checks the choice Core made against the contract, then follows it:
/// it reads Core's trace for that one fact (see `Model+Run.swift`, `sleep(from:to:)`).
final class Model {
    struct SourceState {
        var valid = true
        var signalled = false
        /// When it was first signalled since last performed: ties between equal orders.
        var firstSignal = 0
        var modes: Set<ModeName> = []
    }

    /// A version-1 source on a descriptor of its own.
    struct DescriptorSourceState {
        var valid = true
        var modes: Set<ModeName> = []
        /// Per mode, how many times it left that mode: an event found by a wait is for the
        /// registration of that moment, which leaving the mode ends (D7, D8).
        var departures: [ModeName: Int] = [:]
    }

    /// A descriptor source found ready by a wait, with what its descriptor reported.
    struct ReadyEvent {
        let index: Int
        let readiness: Set<ReadinessName>
        /// The source's departures from the mode when the wait found it ready.
        let departures: Int
    }

    struct TimerState {
        var valid = true
        /// In nanoseconds.
        var instant: Int
        /// In nanoseconds; for a repeating timer at most half the interval (T10).
        var tolerance: Int
        /// Added to the loop at least once (see `setFireInstant`).
        var bound = false
        /// When it was first added: ties between equal instants and orders.
        var firstAdded = 0
        var modes: Set<ModeName> = []
        var firing = false
        /// Set inside its callback; applied when the callback returns.
        var setWhileFiring: Int?
        /// Changes whenever the timer is re-armed or fires, so that a pass knows a timer it
        /// found due was re-armed since (it then falls due in a later pass).
        var arming = 0
    }

    struct ObserverState {
        var valid = true
        var firing = false
    }

    struct Block {
        let id: Int
        let modes: Set<ModeName>
        let action: Int
    }

    struct RunState {
        let mode: ModeName
        var stopped = false
    }

    static let millisecond = 1_000_000

    let program: Program
    var script: Script
    /// Core's trace of the same program: the model reads in it only where, within the
    /// tolerance windows, Core chose to end a sleep (see `sleep(from:to:)`).
    let observed: Trace?
    var stepIndex = 0
    var passesThisStep = 0
    static let passesPerStepLimit = 100_000
    /// The virtual clock, in nanoseconds since the program began.
    var now = 0
    var commonModes: Set<ModeName> = [.default]
    /// The items added to `common`, in the order they were added: a mode made common later
    /// receives them in this order.
    var commonItems: [ItemRef] = []
    var sources: [SourceState]
    var descriptorSources: [DescriptorSourceState]
    /// What each descriptor source's descriptor is ready for (empty: not ready).
    var readiness: [Set<ReadinessName>]
    /// The ready descriptor sources the last wait found, until a pass handles them: the loop
    /// has one such batch, which the next wait replaces (see README.md).
    var readyBatch: [ReadyEvent] = []
    var timers: [TimerState]
    var observers: [ObserverState]
    /// Each mode's observers in the order they were added (ties between equal orders).
    var observersByMode: [ModeName: [Int]] = [:]
    /// The queued blocks, oldest first.
    var blocks: [Block] = []
    var blockCount = 0
    /// The active runs, innermost last.
    var runs: [RunState] = []
    var wakePending = false
    /// Hands out the "when" of first signals and first adds.
    var clock = 0
    var events: [String] = []
    /// `schedule` / `cancel` callbacks of the current API call, printed sorted (Core may make
    /// them in any order of modes).
    var membershipEvents: [String] = []

    init(program: Program, observed: Trace?) {
        self.program = program
        self.observed = observed
        script = Script(program: program)
        sources = program.sources.map { _ in SourceState() }
        descriptorSources = program.descriptors.map { _ in DescriptorSourceState() }
        readiness = program.descriptors.map { _ in [] }
        timers = program.timers.map {
            TimerState(
                instant: $0.fireAt * Self.millisecond,
                tolerance: Self.clamp(tolerance: $0.tolerance * Self.millisecond, interval: $0.interval))
        }
        observers = program.observers.map { _ in ObserverState() }
    }

    /// The trace the contract predicts for `program`; where the contract leaves Core a choice,
    /// the choice made in `observed` (Core's trace), if the contract allows it.
    static func predict(_ program: Program, observed: Trace?) -> Trace {
        let model = Model(program: program, observed: observed)
        var trace = Trace()
        for (index, step) in program.steps.enumerated() {
            model.stepIndex = index
            model.passesThisStep = 0
            model.script.beginStep()
            model.execute(step)
            model.events.append(model.stateLine())
            trace.steps.append(model.events)
            model.events = []
        }
        return trace
    }

    /// What the trace says when a run would sleep forever (see `wait(in:polls:until:)`).
    static let endlessSleep = "sleep without end: another thread calls stop()"

    func log(_ event: String) {
        events.append("\(TraceFormat.time(nanoseconds: Int64(now))) \(event)")
    }

    /// A repeating timer's tolerance is at most half its interval (T10).
    static func clamp(tolerance: Int, interval: Int?) -> Int {
        interval.map { min(tolerance, $0 * millisecond / 2) } ?? tolerance
    }

    func tick() -> Int {
        clock += 1
        return clock
    }

    // MARK: - Operations

    func execute(_ action: Action) {
        switch action {
        case .none: break
        case let .add(item, mode): add(item, to: mode)
        case let .remove(item, mode): remove(item, from: mode)
        case let .invalidate(item): invalidate(item)
        case let .signal(index):
            // Only the first signal since the last perform counts for the order.
            if sources[index].valid, !sources[index].signalled {
                sources[index].signalled = true
                sources[index].firstSignal = tick()
            }
        case let .setFireInstant(index, fromNow): setFireInstant(index, now + fromNow * Self.millisecond)
        case let .setTolerance(index, milliseconds): setTolerance(index, milliseconds * Self.millisecond)
        case let .setReadiness(index, ready): readiness[index] = ready
        case .signalDescriptor: break // No effect on a version-1 source (D5).
        case let .perform(modes, action):
            blockCount += 1
            blocks.append(Block(id: blockCount, modes: modes, action: action))
        case let .run(mode, timeout, once):
            guard runs.count < Limits.runDepth else { break }
            log("run \(mode)")
            let result = run(mode, timeout: timeout, returnAfterSourceHandled: once)
            log("run \(mode) -> \(result)")
        case .stop:
            // The innermost run; none: no effect.
            if !runs.isEmpty { runs[runs.count - 1].stopped = true }
        case .wakeUp:
            if !runs.isEmpty { wakePending = true }
        case let .addCommonMode(mode): addCommonMode(mode)
        case let .advanceClock(milliseconds): now += milliseconds * Self.millisecond
        }
        for event in membershipEvents.sorted() { log(event) }
        membershipEvents = []
    }

    /// `common` stands for every common mode.
    func targets(of mode: ModeName) -> Set<ModeName> {
        mode == .common ? commonModes : [mode]
    }

    func add(_ item: ItemRef, to mode: ModeName) {
        guard isValid(item) else { return }
        if mode == .common, !commonItems.contains(item) { commonItems.append(item) }
        switch item {
        case let .source(index):
            for target in targets(of: mode) where sources[index].modes.insert(target).inserted {
                membershipEvents.append("schedule \(item) \(target)")
            }
        case let .descriptor(index):
            // No schedule / cancel callbacks: a descriptor source has none.
            descriptorSources[index].modes.formUnion(targets(of: mode))
        case let .timer(index):
            if !timers[index].bound {
                timers[index].bound = true
                timers[index].firstAdded = tick()
            }
            join(timer: index, targets(of: mode))
        case let .observer(index):
            for target in targets(of: mode) where !observersByMode[target, default: []].contains(index) {
                observersByMode[target, default: []].append(index)
            }
        }
    }

    /// A timer joins modes; one that was in none is clamped to now if its instant is past
    /// (which re-anchors a repeating timer's grid). A firing timer is re-armed when its
    /// callback returns instead.
    func join(timer index: Int, _ modes: Set<ModeName>) {
        if timers[index].modes.isEmpty, !timers[index].firing, timers[index].instant < now {
            timers[index].instant = now
            timers[index].arming += 1
        }
        timers[index].modes.formUnion(modes)
    }

    func remove(_ item: ItemRef, from mode: ModeName) {
        if mode == .common { commonItems.removeAll { $0 == item } }
        switch item {
        case let .source(index):
            for target in targets(of: mode) where sources[index].modes.remove(target) != nil {
                membershipEvents.append("cancel \(item) \(target)")
            }
        case let .descriptor(index):
            for target in targets(of: mode) where descriptorSources[index].modes.remove(target) != nil {
                descriptorSources[index].departures[target, default: 0] += 1
            }
        case let .timer(index):
            timers[index].modes.subtract(targets(of: mode))
        case let .observer(index):
            for target in targets(of: mode) { observersByMode[target]?.removeAll { $0 == index } }
        }
    }

    /// Takes the item out of every mode and out of `common`; no callout reaches it after this.
    func invalidate(_ item: ItemRef) {
        guard isValid(item) else { return }
        commonItems.removeAll { $0 == item }
        switch item {
        case let .source(index):
            sources[index].valid = false
            for mode in sources[index].modes { membershipEvents.append("cancel \(item) \(mode)") }
            sources[index].modes = []
        case let .descriptor(index):
            descriptorSources[index].valid = false
            for mode in descriptorSources[index].modes { descriptorSources[index].departures[mode, default: 0] += 1 }
            descriptorSources[index].modes = []
        case let .timer(index):
            timers[index].valid = false
            timers[index].modes = []
            timers[index].arming += 1
        case let .observer(index):
            observers[index].valid = false
            for mode in Array(observersByMode.keys) { observersByMode[mode]!.removeAll { $0 == index } }
        }
    }

    func isValid(_ item: ItemRef) -> Bool {
        switch item {
        case let .source(index): sources[index].valid
        case let .descriptor(index): descriptorSources[index].valid
        case let .timer(index): timers[index].valid
        case let .observer(index): observers[index].valid
        }
    }

    /// Re-arms a timer (a past instant means now); inside its callback, the instant is kept
    /// for when the callback returns. No effect on an invalidated timer.
    ///
    /// A timer never added to the loop is left alone: it has no loop, so Core would read the
    /// real clock, not the virtual one (the harness skips it too).
    func setFireInstant(_ index: Int, _ instant: Int) {
        guard timers[index].valid, timers[index].bound else { return }
        if timers[index].firing {
            timers[index].setWhileFiring = instant
        } else {
            timers[index].instant = max(instant, now)
            timers[index].arming += 1
        }
    }

    /// Changes the tolerance (clamped, T10) of a valid timer; outside its callback that re-arms
    /// it at its instant (a timer step then leaves it for a later pass). Unbound: no queue to
    /// re-arm in, nothing else changes.
    func setTolerance(_ index: Int, _ tolerance: Int) {
        guard timers[index].valid else { return }
        timers[index].tolerance = Self.clamp(tolerance: tolerance, interval: program.timers[index].interval)
        if !timers[index].firing { timers[index].arming += 1 }
    }

    /// The new common mode gets the items added to `common` so far (valid ones), in the order
    /// they were added there.
    func addCommonMode(_ mode: ModeName) {
        guard mode != .common, commonModes.insert(mode).inserted else { return }
        for item in commonItems where isValid(item) {
            switch item {
            case let .source(index):
                if sources[index].modes.insert(mode).inserted { membershipEvents.append("schedule \(item) \(mode)") }
            case let .descriptor(index):
                descriptorSources[index].modes.insert(mode)
            case let .timer(index):
                if !timers[index].modes.contains(mode) { join(timer: index, [mode]) }
            case let .observer(index):
                if !observersByMode[mode, default: []].contains(index) {
                    observersByMode[mode, default: []].append(index)
                }
            }
        }
    }

    // MARK: - State

    /// The observable state after a step, as `TraceFormat.state` prints it.
    func stateLine() -> String {
        func modes(_ item: ItemRef, _ inModes: Set<ModeName>) -> [ModeName] {
            Array(inModes) + (commonItems.contains(item) ? [.common] : [])
        }
        let items: [TraceFormat.ItemState] =
            sources.indices.map { index in
                TraceFormat.source(
                    index, valid: sources[index].valid, signalled: sources[index].signalled,
                    modes: modes(.source(index), sources[index].modes))
            }
            + descriptorSources.indices.map { index in
                // Never signalled (D5): no detail.
                .init(
                    name: "d\(index)", valid: descriptorSources[index].valid, detail: nil,
                    modes: modes(.descriptor(index), descriptorSources[index].modes))
            }
            + timers.indices.map { index in
                .init(
                    name: "t\(index)", valid: timers[index].valid,
                    detail: TraceFormat.timerDetail(
                        next: Int64(timers[index].instant), tolerance: Int64(timers[index].tolerance)),
                    modes: modes(.timer(index), timers[index].modes))
            }
            + observers.indices.map { index in
                let inModes = Set(observersByMode.filter { $0.value.contains(index) }.keys)
                return .init(
                    name: "o\(index)", valid: observers[index].valid, detail: nil,
                    modes: modes(.observer(index), inModes))
            }
        return TraceFormat.state(commonModes: Array(commonModes), items: items)
    }
}
