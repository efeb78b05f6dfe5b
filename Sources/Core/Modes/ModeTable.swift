/// A loop's modes and their items, by mode number (``Loop/Mode`` is an index into the
/// process's table of mode names).
///
/// An array indexed by the mode's number: looking a mode up costs an index, not a hash, and
/// reading or updating a mode in place never copies its items (a dictionary's optional
/// subscript copies the value on read and allocates on modify).
struct ModeTable: Sequence {
    private var slots: [ModeState?] = [ModeState()]

    /// The items of `mode`, or `nil` when the loop never had that mode.
    subscript(mode: Loop.Mode) -> ModeState? {
        _read {
            yield mode.index < slots.count ? slots[mode.index] : nil
        }
        _modify {
            if mode.index >= slots.count { grow(to: mode.index) }
            yield &slots[mode.index]
        }
    }

    /// The items of `mode`, created empty if the loop did not have that mode.
    subscript(mode: Loop.Mode, default empty: @autoclosure () -> ModeState) -> ModeState {
        _read {
            yield((mode.index < slots.count ? slots[mode.index] : nil) ?? empty())
        }
        _modify {
            if mode.index >= slots.count { grow(to: mode.index) }
            if slots[mode.index] == nil { slots[mode.index] = empty() }
            yield &slots[mode.index]!
        }
    }

    /// Whether the loop has `mode`.
    func contains(_ mode: Loop.Mode) -> Bool {
        mode.index < slots.count && slots[mode.index] != nil
    }

    /// Runs `update` on the items of `mode` in place, if the loop has that mode.
    mutating func update<R>(_ mode: Loop.Mode, _ update: (inout ModeState) -> R) -> R? {
        guard mode.index < slots.count, slots[mode.index] != nil else { return nil }
        return update(&slots[mode.index]!)
    }

    /// Reads the items of `mode` without copying them, if the loop has that mode.
    func read<R>(_ mode: Loop.Mode, _ read: (borrowing ModeState) -> R) -> R? {
        guard mode.index < slots.count, let state = slots[mode.index] else { return nil }
        return read(state)
    }

    /// Updates every mode's items in place.
    mutating func updateEach(_ update: (Loop.Mode, inout ModeState) -> Void) {
        for index in slots.indices where slots[index] != nil {
            update(Loop.Mode(index: index), &slots[index]!)
        }
    }

    /// Updates every mode's items in place.
    mutating func updateEach(_ update: (inout ModeState) -> Void) {
        updateEach { _, state in update(&state) }
    }

    /// At most the instant of every timer queued in any mode (see ``PassHints``).
    var timerLowerBound: Int64 {
        slots.reduce(Int64.max) { bound, slot in Swift.min(bound, slot?.timerQueue.lowerBound ?? .max) }
    }

    /// Whether the items of some mode satisfy `predicate`.
    func containsMode(where predicate: (borrowing ModeState) -> Bool) -> Bool {
        slots.contains { $0.map(predicate) ?? false }
    }

    func makeIterator() -> some IteratorProtocol<(mode: Loop.Mode, state: ModeState)> {
        slots.enumerated().lazy.compactMap { index, state in state.map { (Loop.Mode(index: index), $0) } }
            .makeIterator()
    }

    private mutating func grow(to index: Int) {
        slots.append(contentsOf: repeatElement(nil, count: index + 1 - slots.count))
    }
}
