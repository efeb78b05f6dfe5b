/// The items added to ``Loop/Mode/common``, in the order they were added, with constant-time
/// membership, insertion and removal.
///
/// Adding or removing a common item looks here once per call; with thousands of common items
/// a linear search made each of those calls cost as much as all the items together. The order
/// is only needed when a mode is made common (its items join in the order they were added),
/// which is rare: it is recovered then by sorting.
struct CommonItems<Item: AnyObject> {
    private var members: [ObjectIdentifier: (added: UInt64, item: Item)] = [:]
    private var additions: UInt64 = 0

    /// Whether `item` is a common item.
    func contains(_ item: Item) -> Bool { members[ObjectIdentifier(item)] != nil }

    /// Adds `item` after the others; no effect when it is already there.
    mutating func insert(_ item: Item) {
        guard members[ObjectIdentifier(item)] == nil else { return }
        additions += 1
        members[ObjectIdentifier(item)] = (additions, item)
    }

    /// Removes `item`; no effect when it is not there.
    mutating func remove(_ item: Item) {
        members[ObjectIdentifier(item)] = nil
    }

    /// The items in the order they were added.
    var inOrder: [Item] {
        members.values.sorted { $0.added < $1.added }.map(\.item)
    }
}
