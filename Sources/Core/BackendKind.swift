/// Which backend a loop waits on: one of RunLoopKit's own, or a backend written elsewhere.
///
/// RunLoopKit's backends are `epoll`, `uring` and `libevent`; only those this build
/// includes exist (pick them at build time with the package traits `Epoll` (default), `URing`
/// and `Libevent`), and ``allCases`` lists them. A backend written outside RunLoopKit names
/// itself with ``init(name:)`` and returns that kind from ``Backend/kind``; two kinds are the
/// same kind when their names are equal.
///
/// A loop remembers its kind (``Loop/backend``): asking a thread for its loop with a factory
/// of another kind is refused with ``BackendError/kindMismatch(existing:requested:)``.
public struct BackendKind: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The kind's name: `epoll`, `uring`, `libevent`, or a third-party backend's own.
    public let name: String

    /// The names RunLoopKit's own backends use, in every build; no other backend may take one.
    private static let builtInNames: Set<String> = ["epoll", "uring", "libevent"]

    /// The kind of a backend written outside RunLoopKit.
    ///
    /// Pick a name that says what the backend waits on (for example `kqueue` or `poll`). The
    /// name is also how errors and descriptions name the backend.
    ///
    /// - Parameter name: the backend's name; must not be empty nor one of RunLoopKit's own
    ///   (`epoll`, `uring`, `libevent`) — a backend that wraps one of those and wants to be
    ///   taken for it returns the built-in kind (`BackendKind.epoll`, say) instead. A refused name is a
    ///   programming error and traps with a message.
    public init(name: String) {
        precondition(!name.isEmpty, "BackendKind(name:): a backend's name must not be empty")
        precondition(
            !Self.builtInNames.contains(name),
            "BackendKind(name:): \"\(name)\" is the name of one of RunLoopKit's own backends; use BackendKind.\(name)")
        self.name = name
    }

    private init(builtIn name: String) {
        self.name = name
    }

    /// The name; the same as ``name`` (kept for code written when the kinds were an enum).
    public var rawValue: String { name }

    /// The built-in kind of this build named `rawValue`, or `nil` when this build has none by
    /// that name (a backend left out by its trait, or a third-party backend's name).
    public init?(rawValue: String) {
        guard let kind = Self.allCases.first(where: { $0.name == rawValue }) else { return nil }
        self = kind
    }

    /// RunLoopKit's own backends that this build includes, in the order epoll, io_uring,
    /// libevent; never a third-party kind.
    public static let allCases: [BackendKind] = {
        var kinds: [BackendKind] = []
        #if Epoll
        kinds.append(.epoll)
        #endif
        #if URing
        kinds.append(.uring)
        #endif
        #if Libevent
        kinds.append(.libevent)
        #endif
        return kinds
    }()

    /// Whether this is one of RunLoopKit's own backends (one of ``allCases``).
    public var isBuiltIn: Bool { Self.allCases.contains(self) }

    #if Epoll
    /// `epoll_pwait2` with an eventfd waker.
    public static let epoll = BackendKind(builtIn: "epoll")
    #endif
    #if URing
    /// io_uring through liburing: poll requests on a ring, nanosecond timeouts.
    public static let uring = BackendKind(builtIn: "uring")
    #endif
    #if Libevent
    /// libevent 2.1 with a precise-timer `event_base`.
    public static let libevent = BackendKind(builtIn: "libevent")
    #endif

    /// The kind's name: `epoll`, `uring`, `libevent`, or a third-party backend's own.
    public var description: String { name }
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
