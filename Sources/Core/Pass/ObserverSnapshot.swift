/// The observers of one mode as they were at one version of the loop's observers: what a
/// notification calls, kept on the loop's thread so that notifying an unchanged set of
/// observers takes no lock.
struct ObserverSnapshot {
    var mode: Loop.Mode?
    var version: UInt64
    var observers: [Loop.Observer]

    /// No observers kept.
    static var empty: ObserverSnapshot { ObserverSnapshot(mode: nil, version: 0, observers: []) }
}
