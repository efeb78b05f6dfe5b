/// The kernel interfaces a loop can wait on; only the kinds this build includes exist.
///
/// Pick them at build time with the package traits `Epoll` (default), `URing` and `Libevent`.
public enum BackendKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    #if Epoll
    /// `epoll_pwait2` with an eventfd waker.
    case epoll
    #endif

    public var description: String { rawValue }
}

extension BackendKind {
    /// The backend a loop gets when none is asked for: epoll when the build includes it,
    /// otherwise io_uring, otherwise libevent.
    public static var `default`: BackendKind {
        #if Epoll
        .epoll
        #else
        #error("RunLoopKit needs at least one backend trait: Epoll, URing or Libevent")
        #endif
    }
}
