/// Counts indexed by a kind (``Loop/WakeupReason``, ``Loop/CalloutKind``, a lateness bucket):
/// a value type with inline storage, so that a statistics snapshot allocates nothing, and one
/// table of counts per kind instead of a field and a line per case.
struct CounterTable<let count: Int>: Sendable, Hashable {
    private var counts = InlineArray<count, UInt64>(repeating: 0)

    init() {}

    subscript(index: Int) -> UInt64 {
        get { counts[index] }
        set { counts[index] = newValue }
    }

    /// Every count, summed.
    var total: UInt64 {
        var sum: UInt64 = 0
        for index in counts.indices { sum &+= counts[index] }
        return sum
    }

    /// The counts in index order.
    var all: [UInt64] { counts.indices.map { counts[$0] } }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.counts.indices.allSatisfy { lhs.counts[$0] == rhs.counts[$0] }
    }

    func hash(into hasher: inout Hasher) {
        for index in counts.indices { hasher.combine(counts[index]) }
    }
}
