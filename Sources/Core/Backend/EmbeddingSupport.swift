/// Whether a host event loop (GLib's, libuv's, a `poll(2)` loop) can wait for a backend: a
/// backend's ``Backend/embedding``.
///
/// A host drives a loop through ``Loop/prepareForHost(in:)`` and ``Loop/dispatchForHost()``:
/// it polls the backend's descriptor instead of the loop calling
/// ``Backend/wait(timeout:into:)``.
public enum EmbeddingSupport: CustomStringConvertible {
    /// A descriptor that becomes readable when a ``Backend/wait(timeout:into:)`` with a zero
    /// timeout would report an event or consume a wake. It stays the backend's: the host polls
    /// it, never reads, writes nor closes it.
    ///
    /// `prepare` runs before each host wait, on the loop's thread with the backend lock held
    /// (the state the backend's other calls see): it hands the kernel whatever it must know for
    /// the descriptor to become readable (the io_uring backend submits its queued polls there).
    /// `nil` when the descriptor needs nothing (epoll's). It is called only while the backend
    /// lives, so it may capture the backend.
    case descriptor(Int32, prepare: (() throws(SystemError) -> Void)? = nil)
    /// The backend offers no such descriptor; `reason` says why, for messages (never empty).
    case unsupported(reason: String)

    /// `descriptor 7` (and `, prepared before each host wait` when it has a step), or
    /// `unsupported:` and the reason.
    public var description: String {
        switch self {
        case let .descriptor(fd, prepare): "descriptor \(fd)\(prepare == nil ? "" : ", prepared before each host wait")"
        case let .unsupported(reason): "unsupported: \(reason)"
        }
    }

    /// The host descriptor, or `nil` when the backend offers none.
    public var hostDescriptor: Int32? {
        if case let .descriptor(fd, _) = self { fd } else { nil }
    }
}
