import SystemPackage

/// Bad input refused where it entered the API.
///
/// The error names the argument and the value it was given, and says why the value cannot be
/// used: for example `fileDescriptor -3: a descriptor must not be negative`.
public struct ArgumentError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name of the refused argument, as the API spells it.
    public let argument: String
    /// The refused value, as text.
    public let value: String
    /// Why the value cannot be used.
    public let reason: String

    /// Creates an error for `argument` with `value`.
    public init(argument: String, value: String, reason: String) {
        self.argument = argument
        self.value = value
        self.reason = reason
    }

    /// The argument, its value and the reason, for example
    /// `tolerance -1.0 seconds: a tolerance must not be negative`.
    public var description: String { "\(argument) \(value): \(reason)" }
}

/// A system call failed.
///
/// One error type for every system call RunLoopKit (or a backend) makes: the operation (the C
/// function's name) and the error it reported, as swift-system's `Errno`. Its description
/// names both, with the error's symbolic name and message, e.g.
/// `epoll_ctl failed: Bad file descriptor (EBADF, errno 9)`.
///
/// Match on ``errno`` with swift-system's names:
///
/// ```swift
/// catch let error as SystemError where error.errno == .badFileDescriptor { … }
/// ```
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C function that failed, e.g. `epoll_ctl`.
    public let operation: String
    /// The error it reported; `errno.rawValue` is the C `errno` value.
    public let errno: Errno

    /// Creates an error for `operation` with `errno`.
    public init(_ operation: String, errno: Errno) {
        self.operation = operation
        self.errno = errno
    }

    /// Creates an error for `operation` with the C `errno` value `code` (for example `EBADF`,
    /// or `errno` read right after the failed call).
    public init(_ operation: String, errno code: CInt) {
        self.init(operation, errno: Errno(rawValue: code))
    }

    /// The operation, the error's text, its symbolic name and its number, for example
    /// `epoll_ctl failed: Bad file descriptor (EBADF, errno 9)`.
    public var description: String {
        "\(operation) failed: \(errno) (\(errnoName(errno.rawValue).map { "\($0), " } ?? "")errno \(errno.rawValue))"
    }
}

/// Errors about choosing or starting a backend.
public enum BackendError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The thread already has a loop, built on another backend.
    case kindMismatch(existing: BackendKind, requested: BackendKind)
    /// The backend cannot start on this machine; RunLoopKit never falls back to another.
    case unavailable(BackendKind, Unavailability)
    /// The kind names no backend this build includes (a third-party backend's kind): RunLoopKit
    /// cannot make it from the kind alone. Create its loop with the backend's own
    /// ``BackendFactory``, through `Loop.current(creatingWith:)` or `LoopThread(name:backend:)`.
    case notBuiltIn(BackendKind)

    /// What went wrong in a sentence, naming the backend kinds involved.
    public var description: String {
        switch self {
        case let .notBuiltIn(kind):
            "\(kind) is not a backend built into RunLoopKit; create its loop with its own BackendFactory"
        case let .kindMismatch(existing, requested) where existing.name == requested.name:
            // Two kinds of one name: RunLoopKit's `glib` and a third-party backend named so.
            "this thread already has a \(existing.descriptionWithOrigin) loop; cannot make it a \(requested.descriptionWithOrigin) loop"
        case let .kindMismatch(existing, requested):
            "this thread already has a \(existing) loop; cannot make it a \(requested) loop"
        case let .unavailable(kind, why):
            "the \(kind) backend cannot start: \(why)"
        }
    }
}

/// Why a backend cannot start.
public enum Unavailability: Hashable, Sendable, CustomStringConvertible {
    /// The kernel lacks the interface (for io_uring: before Linux 5.1, or built without it).
    case kernelTooOld(SystemError)
    /// The kernel has the interface but an administrator turned it off (for io_uring: the
    /// `kernel.io_uring_disabled` sysctl).
    case disabledByKernel(SystemError)
    /// A seccomp filter or container sandbox refused the system call.
    case blockedBySandbox(SystemError)
    /// The locked-memory limit (`RLIMIT_MEMLOCK`) is too small for the backend's buffers.
    case lockedMemoryLimit(SystemError)
    /// Any other failure to start.
    case other(SystemError)

    /// Why the backend cannot start, in a phrase, with the system error behind it.
    public var description: String {
        switch self {
        case let .kernelTooOld(error): "the kernel does not support it (\(error))"
        case let .disabledByKernel(error): "it is disabled by the kernel's configuration (\(error))"
        case let .blockedBySandbox(error): "a sandbox or seccomp filter refused it (\(error))"
        case let .lockedMemoryLimit(error): "the locked-memory limit is too low (\(error))"
        case let .other(error): "\(error)"
        }
    }
}
