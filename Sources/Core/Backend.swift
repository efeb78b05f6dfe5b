/// What a descriptor is watched for.
public struct Interest: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The interest as bits: 1 readable, 2 writable.
    public let rawValue: UInt8
    /// Creates an interest from its bits; bits other than ``readable`` and ``writable`` are
    /// refused by the descriptor sources that take an interest.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data can be read (or the peer closed).
    public static let readable = Interest(rawValue: 1 << 0)
    /// Data can be written.
    public static let writable = Interest(rawValue: 1 << 1)

    /// The interest as `readable`, `writable`, `[readable, writable]` or `[]`.
    public var description: String {
        switch self {
        case .readable: "readable"
        case .writable: "writable"
        case [.readable, .writable]: "[readable, writable]"
        default: "[]"
        }
    }
}

/// What a ready descriptor reported.
public struct Readiness: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The readiness as bits: 1 readable, 2 writable, 4 hang-up, 8 error.
    public let rawValue: UInt8
    /// Creates a readiness from its bits (backends build it from the kernel's event flags).
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data can be read.
    public static let readable = Readiness(rawValue: 1 << 0)
    /// Data can be written.
    public static let writable = Readiness(rawValue: 1 << 1)
    /// The peer hung up (reads return end of file).
    public static let hangup = Readiness(rawValue: 1 << 2)
    /// The descriptor has an error pending.
    public static let error = Readiness(rawValue: 1 << 3)

    /// The reported conditions as a list, for example `[readable, hangup]`.
    public var description: String {
        let names: [(Readiness, String)] = [
            (.readable, "readable"), (.writable, "writable"), (.hangup, "hangup"), (.error, "error"),
        ]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }

    /// Whether a source watching `interest` should hear about this readiness.
    ///
    /// Hang-ups and errors concern every interest: the owner must learn about them to close.
    public func concerns(_ interest: Interest) -> Bool {
        if !isDisjoint(with: [.hangup, .error]) { return true }
        return (contains(.readable) && interest.contains(.readable))
            || (contains(.writable) && interest.contains(.writable))
    }
}

/// An opaque value a backend hands back with each ready event.
///
/// Core gives every registration a fresh token, so an event that arrives for a registration
/// that has since ended (a descriptor closed and reused within one batch) is recognised and
/// dropped in Core, once, for every backend.
public struct Token: Hashable, Sendable, CustomStringConvertible {
    /// The token's value, from a process-wide counter: Core never hands out one value twice.
    public let rawValue: UInt64
    /// Creates a token with `rawValue` (Core does; a backend only hands tokens back).
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// The token as `#` and its value, for messages.
    public var description: String { "#\(rawValue)" }
}

/// One ready descriptor, as a backend reports it.
public struct ReadyEvent: Hashable, Sendable {
    /// The token the descriptor was registered with.
    public var token: Token
    /// What the descriptor is ready for.
    public var readiness: Readiness

    /// Creates an event reporting `readiness` for the descriptor registered with `token`.
    public init(token: Token, readiness: Readiness) {
        self.token = token
        self.readiness = readiness
    }
}

/// Wakes a backend's wait from any thread.
///
/// A wake that happens before a wait begins makes that wait return at once; wakes posted while
/// one is already pending should cost no system call.
public protocol BackendWaker: Sendable {
    /// Makes the current or next ``Backend/wait(timeout:into:)`` return. Safe from any thread.
    func wake()
}

/// The one thing a backend abstracts: wait on a set of descriptors with a timeout, and be
/// woken from another thread.
///
/// Everything else (modes, timers, ordering, observers) lives in Core. A backend is created
/// for one loop and, except for its ``waker``, used only on that loop's thread (the main loop's
/// backend may be created on another thread before the main thread uses it). Readiness is
/// level-triggered: a descriptor that stays ready is reported by every wait.
public protocol Backend: AnyObject {
    /// Which kind of backend this is.
    var kind: BackendKind { get }

    /// The waker that interrupts ``wait(timeout:into:)``; safe to use from any thread.
    var waker: any BackendWaker { get }

    /// Starts watching `descriptor` for `interest`; its events carry `token`.
    ///
    /// A descriptor is registered at most once at a time.
    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError)

    /// Changes the interest (and token) of a registered descriptor.
    func modify(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError)

    /// Stops watching `descriptor`. A descriptor that was already closed is not an error.
    ///
    /// After this returns, no later wait reports `token`.
    func unregister(_ descriptor: Int32, token: Token) throws(SystemError)

    /// Sleeps until a registered descriptor is ready, `timeout` passes, or the waker is woken.
    ///
    /// The wait may also return early with nothing to report (a signal interrupted it): it
    /// must then return, not restart with the whole timeout; Core computes what is left.
    ///
    /// - Parameters:
    ///   - timeout: how long to wait at most; `nil` waits until an event, `.zero` polls. The
    ///     backend rounds it up to its clock's resolution, never down.
    ///   - events: cleared, then filled with the ready descriptors (not the waker).
    /// - Returns: whether a wake of the ``waker`` was consumed by this wait, so that a
    ///   backend's wake can be checked on its own (the conformance suite does). Core does not
    ///   need it: its own sleep flags tell it whether a wait that returned empty-handed was
    ///   woken for this sleep, and it waits again when not.
    @discardableResult
    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) -> Bool
}
