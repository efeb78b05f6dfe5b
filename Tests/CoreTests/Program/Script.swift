/// Bounds that make every step end, applied identically by the model and by the Core harness.
enum Limits {
    /// Callouts of one step that perform their action; later ones stop the innermost run
    /// instead, so that neither a source that keeps signalling itself nor a run without a
    /// timeout keeps a step busy forever.
    static let calloutsWithActions = 40
    /// A callout's `run` does nothing when this many runs are active already.
    static let runDepth = 3
}

/// Which action a callout performs: the n-th callout of an item performs its n-th action
/// (cyclically), until the step's callout budget is spent (then: stop). Test plumbing, shared by the model
/// and the harness so that both make the same choices; it states no rule of the loop.
struct Script {
    let program: Program
    private var calloutsThisStep = 0
    private var calls: [ItemRef: Int] = [:]

    init(program: Program) { self.program = program }

    mutating func beginStep() { calloutsThisStep = 0 }

    /// The action of `item`'s next callout.
    mutating func nextAction(of item: ItemRef) -> Action {
        let actions = program.actions(of: item)
        let call = calls[item, default: 0]
        calls[item] = call + 1
        guard !actions.isEmpty else { return spend(.none) }
        return spend(actions[call % actions.count])
    }

    /// The action of a block queued to do block action `index`.
    mutating func blockAction(_ index: Int) -> Action {
        spend(program.blockActions[index])
    }

    private mutating func spend(_ action: Action) -> Action {
        calloutsThisStep += 1
        return calloutsThisStep <= Limits.calloutsWithActions ? action : .stop
    }
}
