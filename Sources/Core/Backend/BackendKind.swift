/// Which backend a loop waits on: one of RunLoopKit's own, or a backend written elsewhere.
///
/// RunLoopKit's backends are `epoll`, `uring`, `libevent` and `glib`; only those this build
/// includes exist (pick them at build time with the package traits `Epoll` (default), `URing`,
/// `Libevent` and `GLib`), and ``allCases`` lists them. A backend written outside RunLoopKit
/// names itself with ``init(name:)`` and returns that kind from ``Backend/kind``; two
/// third-party kinds are the same kind when their names are equal.
///
/// ## A third-party backend named `glib`
///
/// `glib` became a built-in name after third-party backends could take it. Such a backend keeps
/// working unchanged: `BackendKind(name: "glib")` is still accepted, and makes a third-party kind
/// that is **not** ``glib``, RunLoopKit's own (a kind's origin takes part in equality, so the two
/// never compare equal, even though both are named `glib`). A loop made with that backend's
/// factory is a loop of the third-party kind; asking its thread for a loop of RunLoopKit's
/// `glib` (or the other way round) is refused with ``BackendError/kindMismatch(existing:requested:)``,
/// whose message tells the two apart. ``init(rawValue:)`` and ``allCases`` name only built-in
/// kinds, so `BackendKind(rawValue: "glib")` is RunLoopKit's own. The names taken before
/// (`epoll`, `uring`, `libevent`) are still refused by ``init(name:)``.
///
/// A loop remembers its kind (``Loop/backend``): asking a thread for its loop with a factory
/// of another kind is refused with ``BackendError/kindMismatch(existing:requested:)``.
public struct BackendKind: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The kind's name: `epoll`, `uring`, `libevent`, `glib`, or a third-party backend's own.
    public let name: String

    /// Whether RunLoopKit made this kind (a built-in backend's, in this build or another) rather
    /// than ``init(name:)``: part of the kind's identity, so that a third-party kind named like a
    /// built-in name added later (`glib`) stays a kind of its own.
    private let isRunLoopKits: Bool

    /// The names RunLoopKit's own backends used before third-party backends could name
    /// themselves; no other backend may take one. `glib`, added later, is not among them: a
    /// third-party backend already named so keeps working (see "A third-party backend named
    /// `glib`" above).
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
        trap(unless: !name.isEmpty, "BackendKind(name:): a backend's name must not be empty")
        trap(
            unless: !Self.builtInNames.contains(name),
            "BackendKind(name:): \"\(name)\" is the name of one of RunLoopKit's own backends; use BackendKind.\(name)")
        self.name = name
        self.isRunLoopKits = false
    }

    private init(builtIn name: String) {
        self.name = name
        self.isRunLoopKits = true
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
    /// libevent, GLib; never a third-party kind.
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
        #if GLib
        kinds.append(.glib)
        #endif
        return kinds
    }()

    /// Whether this is one of RunLoopKit's own backends (one of ``allCases``); `false` for a
    /// third-party kind, even one named `glib`.
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
    #if GLib
    /// GLib 2.x: a `GMainContext`'s sources served by the loop, nanosecond waits in `ppoll`.
    public static let glib = BackendKind(builtIn: "glib")
    #endif

    /// The kind's name: `epoll`, `uring`, `libevent`, `glib`, or a third-party backend's own.
    public var description: String { name }

    /// The kind as messages name it when two kinds share a name: the name, and whose backend it
    /// is (`glib (RunLoopKit's)`, `glib (third-party)`).
    package var descriptionWithOrigin: String { "\(name) (\(isRunLoopKits ? "RunLoopKit's" : "third-party"))" }
}

extension BackendKind {
    /// The backend a loop gets when none is asked for: epoll when the build includes it,
    /// otherwise io_uring, otherwise libevent, otherwise GLib.
    public static var `default`: BackendKind {
        #if Epoll
        .epoll
        #elseif URing
        .uring
        #elseif Libevent
        .libevent
        #elseif GLib
        .glib
        #else
        #error("RunLoopKit needs at least one backend trait: Epoll, URing, Libevent or GLib")
        #endif
    }
}
