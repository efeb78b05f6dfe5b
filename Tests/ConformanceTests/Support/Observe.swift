import RunLoopKit
import Synchronization
import TestSupport

extension Loop {
    /// Adds an observer to `mode` that records every activity (or those given) in `trace`.
    @discardableResult
    func record(
        _ activities: Activity = .allActivities, in mode: Mode = .default, into trace: Trace, prefix: String = ""
    ) -> Observer {
        let observer = Observer(activities: activities) { _, activity in trace(prefix + activity.description) }
        add(observer, to: mode)
        return observer
    }
}

/// A version-0 source that records `name` when performed.
func recordingSource(_ name: String, order: Int = 0, into trace: Trace) -> Loop.Source {
    Loop.Source(order: order) { trace(name) }
}

/// A one-shot timer recording `name`, due `delay` from now.
func recordingTimer(
    _ name: String, after delay: Duration = .zero, order: Int = 0, into trace: Trace
) throws -> Loop.Timer {
    try Loop.Timer(after: delay, order: order) { _ in trace(name) }
}

/// A version-0 source that records `name` and then invalidates itself, so it does not keep its
/// mode alive once performed.
func oneShotSource(_ name: String, order: Int = 0, into trace: Trace) -> Loop.Source {
    let ref = WeakRef<Loop.Source>()
    let source = Loop.Source(order: order) {
        trace(name)
        ref.value?.invalidate()
    }
    ref.value = source
    return source
}
