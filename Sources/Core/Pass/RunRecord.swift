/// One active run of the loop; the innermost is last.
struct RunRecord {
    /// What drives the run.
    enum Kind {
        /// A `run` call.
        case run
        /// A host loop, from ``Loop/prepareForHost(in:)`` until its ``Loop/dispatchForHost()``
        /// has run its pass (or ``Loop/cancelHostWait()``): for other threads the loop runs
        /// then, so `wakeUp()` and `stop()` act on it (W1, W2), and ``LoopState/currentMode``
        /// is the host's mode.
        case hostWait
    }

    var mode: Loop.Mode
    var kind: Kind = .run
    var stopped = false
}
