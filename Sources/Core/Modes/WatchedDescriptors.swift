/// A mode's version-1 sources by descriptor, and the descriptors whose sources changed since
/// the registrar last took them: what mode membership hands the registrar
/// (``Registrar/sync(_:mainQueue:mayHaveChanged:changes:)``), so that the registrar never reads
/// the loop's state itself.
///
/// Guarded by the loop's state lock, like the rest of ``ModeState``.
struct WatchedDescriptors {
    /// The version-1 sources by descriptor, each list in the order its sources joined: what
    /// the backend must watch while this mode runs.
    private(set) var sources: [Int32: [Loop.Source]] = [:]
    /// Descriptors whose list of sources changed since the registrar last took this mode's
    /// changes: when this mode stays registered, only these need looking at, so that adding or
    /// removing one of 10,000 sources costs one descriptor's work, not 10,000.
    private var changed: Set<Int32> = []

    /// `source` joined the mode, watching `descriptor`.
    mutating func add(_ source: Loop.Source, on descriptor: Int32) {
        sources[descriptor, default: []].append(source)
        changed.insert(descriptor)
    }

    /// `source` left the mode; it watched `descriptor`.
    mutating func remove(_ source: Loop.Source, from descriptor: Int32) {
        let remaining = sources.update(descriptor) { sources in
            sources.removeAll { $0 === source }
            return sources.count
        }
        if remaining == 0 { sources[descriptor] = nil }
        changed.insert(descriptor)
    }

    /// What the registrar needs and takes: every descriptor when it registers this mode afresh
    /// (`all`), else the changed ones with their sources now. Either way the changes are taken.
    mutating func take(all: Bool) -> DescriptorTable.Changes {
        defer { changed.removeAll(keepingCapacity: true) }
        guard !all else { return .all(sources) }
        return .some(changed.map { ($0, sources[$0] ?? []) })
    }
}
