/// Why a ``VirtualLoop`` refused to move its time.
public enum VirtualLoopError: Error, Equatable, CustomStringConvertible {
    /// The requested instant is before the loop's current one: virtual time only moves forward.
    case backwards(now: ContinuousClock.Instant, requested: ContinuousClock.Instant)
    /// The loop ended (``VirtualLoop/stop()``) before or during the call.
    case ended
    /// The loop was still busy after `within` of real time (``VirtualLoop/settleLimit``): a
    /// descriptor that stays ready (readiness is level-triggered: a handler that does not read
    /// or write it is called again at once), work that posts or signals itself again each time
    /// (a real loop would spin there too), or a callout that does not return (then
    /// ``VirtualLoop/stop()`` waits for it as well).
    case notSettled(within: Duration)

    /// What went wrong, naming the virtual loop.
    public var description: String {
        switch self {
        case let .backwards(now, requested):
            "VirtualLoop: cannot move time backwards, to \(requested - now) from now"
        case .ended: "VirtualLoop: the loop ended"
        case let .notSettled(limit):
            "VirtualLoop: the loop was still busy after \(limit) of real time (a callout that does not return, "
                + "a descriptor left ready, or work that posts itself again)"
        }
    }
}
