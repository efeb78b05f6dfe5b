/// Why a block given to `submit` never ran, so its caller got no value.
///
/// `submit` never leaves its caller waiting for a block that will not run: each of these is
/// thrown as soon as it is certain.
public enum SubmitError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The loop refused the block: its thread had already ended (the loop was torn down), or
    /// it is the loop of a ``LoopThread`` whose ``LoopThread/stop()`` has begun.
    case refused
    /// The loop was torn down (its thread ended) with the block still queued.
    case loopEnded
    /// The awaiting task was cancelled before the block started: the block was taken out of
    /// the loop's queue and will never run.
    case cancelled

    /// What happened to the block, in a sentence.
    public var description: String {
        switch self {
        case .refused:
            "the loop refused the submitted block: its thread has ended, or its LoopThread is stopping"
        case .loopEnded:
            "the loop's thread ended with the submitted block still queued; it never ran"
        case .cancelled:
            "the awaiting task was cancelled before the submitted block started; it never ran"
        }
    }
}
