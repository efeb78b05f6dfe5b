import RunLoopCore

#if Epoll
import RunLoopBackendEpoll
#endif
#if URing
import RunLoopBackendURing
#endif
#if Libevent
import RunLoopBackendLibevent
#endif
#if GLib
import RunLoopBackendGLib
#endif

extension BackendKind {
    /// How to create a backend of this kind, for the built-in kinds (`allCases`).
    ///
    /// A third-party kind has no factory here (RunLoopKit cannot make its backend): asking
    /// for one is a programming error and traps with a message. Use the backend's own
    /// `BackendFactory` instead.
    public var factory: BackendFactory {
        guard let factory = builtInFactory else {
            trap("BackendKind.factory: \(BackendError.notBuiltIn(self))")
        }
        return factory
    }

    /// The factory of a built-in kind; `nil` for a third-party kind.
    var builtInFactory: BackendFactory? {
        switch self {
        #if Epoll
        case .epoll: BackendFactory(kind: .epoll) { try EpollBackend() }
        #endif
        #if URing
        case .uring: BackendFactory(kind: .uring) { try URingBackend() }
        #endif
        #if Libevent
        case .libevent: BackendFactory(kind: .libevent) { try LibeventBackend() }
        #endif
        #if GLib
        // The main loop serves GLib's global default context; every other loop a fresh one.
        case .glib: GLibBackend.builtInFactory
        #endif
        default: nil
        }
    }

    /// The factory of a built-in kind, or `BackendError/notBuiltIn(_:)`.
    package func requireFactory() throws(BackendError) -> BackendFactory {
        guard let factory = builtInFactory else { throw .notBuiltIn(self) }
        return factory
    }
}

extension Loop {
    /// The calling thread's loop, created on first use with the build's default backend.
    ///
    /// On the main thread this is `main`. Traps with a message if the default backend
    /// cannot start; use `current(backend:)` to handle that as an error.
    public static var current: Loop {
        do {
            if let loop = currentIfCreated { return loop }
            return try current(creatingWith: BackendKind.default.factory)
        } catch {
            trap("RunLoopKit: cannot create this thread's loop: \(error)")
        }
    }

    /// The main thread's loop, created on first use with the build's default backend.
    ///
    /// Safe to call from any thread. Traps with a message if the default backend cannot start.
    public static var main: Loop {
        // An existing main loop is the main loop, whatever backend it was made with.
        if let existing = mainIfCreated { return existing }
        do {
            return try main(creatingWith: BackendKind.default.factory)
        } catch {
            trap("RunLoopKit: cannot create the main loop: \(error)")
        }
    }

    /// The calling thread's loop, created with `backend` if the thread has none yet.
    ///
    /// - Throws: `BackendError.kindMismatch(existing:requested:)` when the thread already
    ///   has a loop of another kind; `BackendError.unavailable(_:_:)` (or a
    ///   `SystemError`) when the backend cannot start here; `BackendError.notBuiltIn(_:)`
    ///   for a third-party kind (use `current(creatingWith:)` with its factory).
    public static func current(backend: BackendKind) throws -> Loop {
        try current(creatingWith: backend.requireFactory())
    }
}

extension LoopThread {
    /// Starts a thread whose loop, built on `backend`, runs until stopped.
    ///
    /// - Throws: `BackendError.unavailable(_:_:)` when the backend cannot start here, or a
    ///   `SystemError` when the thread cannot; `BackendError.notBuiltIn(_:)` for a
    ///   third-party kind (use `LoopThread(name:backend:)` with its factory).
    public convenience init(name: String = "RunLoopKit", backend: BackendKind = .default) throws {
        try self.init(name: name, backend: backend.requireFactory())
    }
}
