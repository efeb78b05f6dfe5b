/// The smaller programs to try when a program fails, most promising first: drop runs of
/// steps (halves, quarters, … single steps), drop callout actions, then simplify what is
/// left. Every candidate is strictly simpler, so shrinking ends.
struct ProgramShrinker: Sequence, IteratorProtocol {
    private enum Edit {
        case dropSteps(Range<Int>)
        case dropCalloutAction(ItemRef, Int)
        case replaceCalloutAction(ItemRef, Int, Action)
        case replaceBlockAction(Int, Action)
        case replaceStep(Int, Action)
        case replaceSource(Int, Program.SourceSpec)
        case replaceDescriptor(Int, Program.DescriptorSpec)
        case replaceTimer(Int, Program.TimerSpec)
        case replaceObserver(Int, Program.ObserverSpec)
    }

    private let program: Program
    private var edits: [Edit] = []
    private var position = 0

    init(program: Program) {
        self.program = program
        let count = program.steps.count
        var size = count / 2
        while size >= 1 {
            edits += stride(from: 0, to: count, by: size).map { .dropSteps($0..<Swift.min($0 + size, count)) }
            size /= 2
        }
        if count == 1 { edits.append(.dropSteps(0..<1)) }
        let items = program.reachable().items
        for item in items {
            let actions = program.actions(of: item)
            edits += actions.indices.map { .dropCalloutAction(item, $0) }
            for (index, action) in actions.enumerated() {
                edits += action.simpler.map { .replaceCalloutAction(item, index, $0) }
            }
        }
        for (index, action) in program.blockActions.enumerated() {
            guard action != .none else { continue }
            edits += ([.none] + action.simpler).map { .replaceBlockAction(index, $0) }
        }
        for (index, step) in program.steps.enumerated() {
            edits += step.simpler.map { .replaceStep(index, $0) }
        }
        for item in items {
            switch item {
            case let .source(index):
                var spec = program.sources[index]
                if spec.order != 0 { spec.order = 0; edits.append(.replaceSource(index, spec)) }
            case let .descriptor(index):
                let spec = program.descriptors[index]
                var candidates: [Program.DescriptorSpec] = []
                if spec.order != 0 { var simpler = spec; simpler.order = 0; candidates.append(simpler) }
                if spec.interest != .readable {
                    var simpler = spec; simpler.interest = .readable; candidates.append(simpler)
                }
                edits += candidates.map { .replaceDescriptor(index, $0) }
            case let .timer(index):
                let spec = program.timers[index]
                var candidates: [Program.TimerSpec] = []
                if spec.order != 0 { var simpler = spec; simpler.order = 0; candidates.append(simpler) }
                if spec.fireAt != 0 { var simpler = spec; simpler.fireAt = 0; candidates.append(simpler) }
                if spec.interval != nil { var simpler = spec; simpler.interval = nil; candidates.append(simpler) }
                if spec.tolerance != 0 { var simpler = spec; simpler.tolerance = 0; candidates.append(simpler) }
                edits += candidates.map { .replaceTimer(index, $0) }
            case let .observer(index):
                let spec = program.observers[index]
                var candidates: [Program.ObserverSpec] = []
                if spec.order != 0 { var simpler = spec; simpler.order = 0; candidates.append(simpler) }
                if !spec.repeats { var simpler = spec; simpler.repeats = true; candidates.append(simpler) }
                if spec.activities.count > 1 {
                    for dropped in spec.activities.indices {
                        var simpler = spec
                        simpler.activities.remove(at: dropped)
                        candidates.append(simpler)
                    }
                }
                edits += candidates.map { .replaceObserver(index, $0) }
            }
        }
    }

    mutating func next() -> Program? {
        guard position < edits.count else { return nil }
        defer { position += 1 }
        var candidate = program
        switch edits[position] {
        case let .dropSteps(range): candidate.steps.removeSubrange(range)
        case let .dropCalloutAction(item, index): candidate.editActions(of: item) { $0.remove(at: index) }
        case let .replaceCalloutAction(item, index, action): candidate.editActions(of: item) { $0[index] = action }
        case let .replaceBlockAction(index, action): candidate.blockActions[index] = action
        case let .replaceStep(index, action): candidate.steps[index] = action
        case let .replaceSource(index, spec): candidate.sources[index] = spec
        case let .replaceDescriptor(index, spec): candidate.descriptors[index] = spec
        case let .replaceTimer(index, spec): candidate.timers[index] = spec
        case let .replaceObserver(index, spec): candidate.observers[index] = spec
        }
        return candidate
    }
}

extension Program {
    fileprivate mutating func editActions(of item: ItemRef, _ edit: (inout [Action]) -> Void) {
        switch item {
        case let .source(index): edit(&sources[index].actions)
        case let .descriptor(index): edit(&descriptors[index].actions)
        case let .timer(index): edit(&timers[index].actions)
        case let .observer(index): edit(&observers[index].actions)
        }
    }
}

extension Action {
    /// Strictly simpler variants: numbers toward zero, modes toward `default`, options off.
    var simpler: [Action] {
        switch self {
        case let .run(mode, timeout, once):
            var variants: [Action] = []
            if once { variants.append(.run(mode, timeout: timeout, returnAfterSourceHandled: false)) }
            // No timeout stays no timeout: a timeout is not simpler, only different.
            if let timeout, timeout != 0 { variants.append(.run(mode, timeout: 0, returnAfterSourceHandled: once)) }
            if let timeout, timeout > 1 {
                variants.append(.run(mode, timeout: timeout / 2, returnAfterSourceHandled: once))
            }
            if mode != .default { variants.append(.run(.default, timeout: timeout, returnAfterSourceHandled: once)) }
            return variants
        case let .setFireInstant(timer, fromNow) where fromNow != 0:
            return [.setFireInstant(timer: timer, fromNow: 0)]
                + (abs(fromNow) > 1 ? [.setFireInstant(timer: timer, fromNow: fromNow / 2)] : [])
        case let .setTolerance(timer, milliseconds) where milliseconds != 0:
            return [.setTolerance(timer: timer, milliseconds: 0)]
                + (milliseconds > 1 ? [.setTolerance(timer: timer, milliseconds: milliseconds / 2)] : [])
        case let .setReadiness(descriptor, readiness) where readiness.count > 1:
            return readiness.sorted().map { .setReadiness(descriptor: descriptor, [$0]) }
        case let .setReadiness(descriptor, readiness) where readiness != [.readable] && !readiness.isEmpty:
            return [.setReadiness(descriptor: descriptor, [.readable])]
        case let .advanceClock(milliseconds) where milliseconds > 1:
            return [.advanceClock(1), .advanceClock(milliseconds / 2)]
        case let .add(item, mode) where mode != .default:
            return [.add(item, .default)]
        case let .remove(item, mode) where mode != .default:
            return [.remove(item, .default)]
        case let .perform(modes, action) where modes.count > 1:
            return modes.map { .perform(modes: [$0], action: action) }
        case let .addCommonMode(mode) where mode != .a:
            return [.addCommonMode(.a)]
        default:
            return []
        }
    }
}
