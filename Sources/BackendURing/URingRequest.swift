#if URing
/// What a completion belongs to, packed into the 64-bit `user_data` of its request.
///
/// The top byte says what kind of request it is; for a poll, the low 56 bits are the id of
/// that one arming. Ids are never reused (2⁵⁶ armings), so a completion that arrives after its
/// registration was unregistered or re-armed carries an id the backend no longer knows and
/// is dropped: exact cancellation does not depend on the kernel's ordering of completions.
enum URingRequest: Equatable {
    /// A one-shot poll request; the id names one arming of one registration.
    case poll(id: UInt64)
    /// Bookkeeping whose completion is never an event: an `IORING_OP_POLL_REMOVE` cancelling a
    /// poll, or the `IORING_OP_NOP` by which `prepareForHostWait()` makes the ring readable.
    case cancel
    /// The waker's message.
    case wake
    /// Anything else, e.g. liburing's internal timeout (`LIBURING_UDATA_TIMEOUT`, all ones)
    /// on kernels without `IORING_FEAT_EXT_ARG`.
    case foreign

    private static let idMask: UInt64 = (1 << 56) - 1
    private static let pollKind: UInt64 = 1
    private static let cancelKind: UInt64 = 2
    private static let wakeKind: UInt64 = 3

    init(userData: UInt64) {
        switch userData >> 56 {
        case Self.pollKind: self = .poll(id: userData & Self.idMask)
        case Self.cancelKind: self = .cancel
        case Self.wakeKind: self = .wake
        default: self = .foreign
        }
    }

    var userData: UInt64 {
        switch self {
        case let .poll(id): Self.pollKind << 56 | id & Self.idMask
        case .cancel: Self.cancelKind << 56
        case .wake: Self.wakeKind << 56
        case .foreign: .max
        }
    }
}
#endif
