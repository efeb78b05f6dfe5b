/// Why a sequence a loop serves (``Loop/Port/messages(on:in:)``,
/// ``Loop/readiness(of:for:in:)-(Int32,_,_)``) ended before its consumer had what it waited for.
///
/// A consumer waiting for the next element never waits for a loop that will not serve it:
/// each of these is thrown as soon as it is certain.
public enum LoopSequenceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The loop was torn down (its thread ended) while the consumer waited, or before it
    /// asked for the next element. Messages still in a port stay there.
    case loopEnded
    /// The loop could not watch the sequence's descriptor (it was closed behind the loop's
    /// back, or is of a kind the backend refuses) and invalidated its source; the loop said
    /// why on standard error.
    case sourceInvalidated

    /// What happened, in a sentence.
    public var description: String {
        switch self {
        case .loopEnded:
            "the loop's thread ended while a consumer waited for the next element of a sequence it served"
        case .sourceInvalidated:
            "the loop could not watch the sequence's descriptor and invalidated its source"
        }
    }
}
