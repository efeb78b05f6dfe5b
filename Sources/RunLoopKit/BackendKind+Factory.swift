import RunLoopCore

#if Epoll
import RunLoopEpoll
#endif
#if URing
import RunLoopURing
#endif
#if Libevent
import RunLoopLibevent
#endif

extension BackendKind {
    /// How to create a backend of this kind.
    public var factory: BackendFactory {
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
        }
    }
}

extension Loop {
    /// The calling thread's loop, created on first use with the build's default backend.
    ///
    /// On the main thread this is ``main``. Traps with a message if the default backend
    /// cannot start; use ``current(backend:)`` to handle that as an error.
    public static var current: Loop {
        do {
            if let loop = currentIfCreated { return loop }
            return try current(creatingWith: BackendKind.default.factory)
        } catch {
            fatalError("RunLoopKit: cannot create this thread's loop: \(error)")
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
            fatalError("RunLoopKit: cannot create the main loop: \(error)")
        }
    }

    /// The calling thread's loop, created with `backend` if the thread has none yet.
    ///
    /// - Throws: `BackendError.kindMismatch(existing:requested:)` when the thread already
    ///   has a loop of another kind; `BackendError.unavailable(_:_:)` (or a
    ///   `SystemError`) when the backend cannot start here.
    public static func current(backend: BackendKind) throws -> Loop {
        try current(creatingWith: backend.factory)
    }
}

extension LoopThread {
    /// Starts a thread whose loop, built on `backend`, runs until stopped.
    ///
    /// - Throws: `BackendError.unavailable(_:_:)` when the backend cannot start here, or a
    ///   `SystemError` when the thread cannot.
    public convenience init(name: String = "RunLoopKit", backend: BackendKind = .default) throws {
        try self.init(name: name, backend: backend.factory)
    }
}
