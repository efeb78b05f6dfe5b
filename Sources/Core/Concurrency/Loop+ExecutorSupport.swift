// What RunLoopKit's main-actor executor needs to know about a loop and the calling thread.

extension Loop {
    /// How many runs of this loop are active, nested in one another: 0 while it is not running,
    /// 1 inside an outermost run. Safe to call from any thread.
    ///
    /// An executor that drives a loop uses it to tell whether a run it started is still the
    /// innermost one (a callout may have nested another run inside it).
    package var runDepth: Int { state.withLock { $0.runs.count } }

    /// Whether the calling thread is the process's main thread; never creates a loop.
    package static var isOnMainThread: Bool { ThreadBinding.isMainThread }
}
