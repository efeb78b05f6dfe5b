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
/// Core gives every registration a fresh token: never zero, never `UInt64.max` (a backend may
/// keep that one for its own use, as the epoll backend does for its waker), and never handed
/// out twice in a process. So an event that arrives for a registration that has since ended
/// (a descriptor closed and reused within one batch) is recognised and dropped in Core, once,
/// for every backend.
public struct Token: Hashable, Sendable, CustomStringConvertible {
    /// The value; a backend stores it and hands it back unchanged.
    public let rawValue: UInt64
    /// Creates a token (Core does; a backend only hands back the ones it was given).
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
