import RunLoopKit

/// Why ``RunLoopCore/Loop/attach(to:mode:priority:)`` refused to attach a loop.
public enum GLibAttachError: Error, Hashable, CustomStringConvertible {
    /// The loop cannot be driven by a host loop: its backend offers no descriptor (libevent,
    /// GLib), or its thread has ended.
    case embedding(Loop.EmbeddingError)
    /// The loop is attached already (to this context or another): one GLib source drives a
    /// loop. Detach it first.
    case alreadyAttached

    /// The error in words.
    public var description: String {
        switch self {
        case let .embedding(error): "the loop cannot be attached to a GLib main context: \(error)"
        case .alreadyAttached: "the loop is attached to a GLib main context already; detach it first"
        }
    }
}
