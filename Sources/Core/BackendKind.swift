/// The kernel interfaces a loop can wait on; only the kinds this build includes exist.
///
/// Pick them at build time with the package traits `Epoll` (default), `URing` and `Libevent`.
public enum BackendKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    #if Epoll
    /// `epoll_pwait2` with an eventfd waker.
    case epoll
    #endif
    #if URing
    /// io_uring through liburing: poll requests on a ring, nanosecond timeouts.
    case uring
    #endif
    #if Libevent
    /// libevent 2.1 with a precise-timer `event_base`.
    case libevent
    #endif

    /// The kind's name: `epoll`, `uring` or `libevent` (also its raw value).
    public var description: String { rawValue }
}

extension BackendKind {
    /// The backend a loop gets when none is asked for: epoll when the build includes it,
    /// otherwise io_uring, otherwise libevent.
    public static var `default`: BackendKind {
        #if Epoll
        .epoll
        #elseif URing
        .uring
        #elseif Libevent
        .libevent
        #else
        #error("RunLoopKit needs at least one backend trait: Epoll, URing or Libevent")
        #endif
    }
}
