/// The state of one `run` call.
struct RunContext {
    let mode: Loop.Mode
    /// When the run times out, in nanoseconds on ``QueueTime``'s scale; `nil` runs until
    /// stopped or finished.
    let deadline: Int64?
    /// A zero or negative timeout: one pass that never sleeps.
    let isPoll: Bool
    let returnAfterSourceHandled: Bool
    /// Every wait of this run reaches the backend, even a poll with no descriptor registered:
    /// a host loop woke for the backend's descriptor, whose pending wake must be consumed.
    let drainsBackend: Bool
    /// A source was handled by this run itself (not by a run nested in it).
    var handledSource = false
}
