/// A random scenario: a fixed set of items (each with what its callouts do) and the steps the
/// test thread performs one after the other, outside any run.
///
/// Items exist from the start, in no mode; steps refer to them by slot. Every action is
/// total (an action on an item that is not there simply has the API's effect, often none), so
/// that removing steps while shrinking always leaves a valid program.
struct Program: Sendable, CustomStringConvertible {
    struct SourceSpec: Hashable, Sendable {
        var order: Int
        /// The n-th callout does `actions[n % count]`.
        var actions: [Action]
    }

    /// A version-1 source on a descriptor of its own (the harness makes a pipe for it).
    struct DescriptorSpec: Hashable, Sendable {
        var interest: InterestName
        var order: Int
        var actions: [Action]
    }

    struct TimerSpec: Hashable, Sendable {
        /// The first fire instant, in ms after the start of the program.
        var fireAt: Int
        /// `nil`: one-shot.
        var interval: Int?
        /// In ms; Core clamps it to half the interval (T10).
        var tolerance: Int
        var order: Int
        var actions: [Action]
    }

    struct ObserverSpec: Hashable, Sendable {
        var activities: [ActivityName]
        var repeats: Bool
        var order: Int
        var actions: [Action]
    }

    var sources: [SourceSpec]
    var descriptors: [DescriptorSpec]
    var timers: [TimerSpec]
    var observers: [ObserverSpec]
    /// What a block queued by `perform(modes:action:)` does.
    var blockActions: [Action]
    var steps: [Action]

    /// The callout actions of `item`.
    func actions(of item: ItemRef) -> [Action] {
        switch item {
        case let .source(index): sources[index].actions
        case let .descriptor(index): descriptors[index].actions
        case let .timer(index): timers[index].actions
        case let .observer(index): observers[index].actions
        }
    }

    func describe(_ item: ItemRef) -> String {
        let (details, actions): (String, [Action]) =
            switch item {
            case let .source(index):
                ("source, order \(sources[index].order)", sources[index].actions)
            case let .descriptor(index):
                (
                    "descriptor source, \(descriptors[index].interest), order \(descriptors[index].order)",
                    descriptors[index].actions
                )
            case let .timer(index):
                (
                    "timer at \(timers[index].fireAt)ms, \(timers[index].interval.map { "every \($0)ms" } ?? "one-shot"), tolerance \(timers[index].tolerance)ms, order \(timers[index].order)",
                    timers[index].actions
                )
            case let .observer(index):
                (
                    "observer of [\(observers[index].activities.map(\.rawValue).joined(separator: ", "))], \(observers[index].repeats ? "repeating" : "one call"), order \(observers[index].order)",
                    observers[index].actions
                )
            }
        let does =
            actions.isEmpty ? "" : "; callouts do, in turn: " + actions.map(\.description).joined(separator: " | ")
        return "\(item): \(details)\(does)"
    }

    /// The items and block actions the steps reach, directly or through callouts.
    func reachable() -> (items: [ItemRef], blockActions: [Int]) {
        var items: [ItemRef] = []
        var blocks: [Int] = []
        var pending = steps
        while let action = pending.popLast() {
            let (refs, block) = action.references
            for item in refs where !items.contains(item) {
                items.append(item)
                pending += actions(of: item)
            }
            if let block, !blocks.contains(block) {
                blocks.append(block)
                pending.append(blockActions[block])
            }
        }
        // Observers are called without being named by a step once they are in a mode, which
        // takes a step naming them: covered above.
        return (items.sorted { $0.description < $1.description }, blocks.sorted())
    }

    var description: String {
        let (items, blocks) = reachable()
        var lines = ["Program of \(steps.count) steps"]
        lines += items.map { "  " + describe($0) }
        lines += blocks.map { "  block#\($0) does: \(blockActions[$0])" }
        lines += steps.enumerated().map { "  step \($0.offset): \($0.element)" }
        return lines.joined(separator: "\n")
    }
}
