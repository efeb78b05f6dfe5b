/// Why a ``VirtualLoop`` refused to move its time.
public enum VirtualLoopError: Error, Equatable, CustomStringConvertible {
    /// The requested instant is before the loop's current one: virtual time only moves forward.
    case backwards(now: ContinuousClock.Instant, requested: ContinuousClock.Instant)
    /// The loop ended (``VirtualLoop/stop()``) before or during the call.
    case ended

    /// What went wrong, naming the virtual loop.
    public var description: String {
        switch self {
        case let .backwards(now, requested):
            "VirtualLoop: cannot move time backwards, to \(requested - now) from now"
        case .ended: "VirtualLoop: the loop ended"
        }
    }
}
