/// The observers of one mode as they were at one version of the loop's observers: what a
/// notification calls, kept on the loop's thread so that notifying an unchanged set of
/// observers takes no lock.
struct ObserverSnapshot {
    var mode: Loop.Mode?
    var version: UInt64
    var observers: [Loop.Observer]
    /// Every activity some observer of the snapshot watches: a notification of another one
    /// looks at none of them.
    var activities: Loop.Activity

    init(mode: Loop.Mode?, version: UInt64, observers: [Loop.Observer]) {
        self.mode = mode
        self.version = version
        self.observers = observers
        activities = observers.reduce(into: []) { $0.formUnion($1.activities) }
    }

    /// No observers kept.
    static var empty: ObserverSnapshot { ObserverSnapshot(mode: nil, version: 0, observers: []) }
}
