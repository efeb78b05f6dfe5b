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

    public var description: String { "\(argument) \(value): \(reason)" }
}

/// A system call failed.
///
/// One error type for every syscall RunLoopKit makes: the operation (the C function's name)
/// and the `errno` it left.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C function that failed, e.g. `epoll_ctl`.
    public let operation: String
    /// The `errno` value it reported.
    public let errno: Int32

    /// Creates an error for `operation` with `errno`.
    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(operation) failed: \(describeErrno(errno)) (errno \(errno))" }
}

/// Errors about choosing or starting a backend.
public enum BackendError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The thread already has a loop, built on another backend.
    case kindMismatch(existing: BackendKind, requested: BackendKind)
    /// The backend could not start on this machine; `reason` says why.
    case unavailable(BackendKind, reason: String)

    public var description: String {
        switch self {
        case let .kindMismatch(existing, requested):
            "this thread already has a \(existing) loop; cannot make it a \(requested) loop"
        case let .unavailable(kind, reason):
            "the \(kind) backend cannot start: \(reason)"
        }
    }
}
