import RunLoopKit

/// What a scenario measures: a RunLoopKit backend, or one of the references.
enum Subject: Hashable, Sendable, CustomStringConvertible {
    /// A RunLoopKit loop on the given backend.
    case kit(BackendKind)
    /// Foundation's CoreFoundation run loop on Linux.
    case coreFoundation
    /// SwiftNIO's event loop: one thread of a `MultiThreadedEventLoopGroup`.
    case nio
    /// The same scenario written directly on the system calls: the lower bound.
    case floor

    var description: String {
        switch self {
        case let .kit(kind): kind.rawValue
        case .coreFoundation: "cf"
        case .nio: "nio"
        case .floor: "floor"
        }
    }

    /// Every subject this build can measure: the build's backends, then the references.
    static var all: [Subject] { BackendKind.allCases.map(Subject.kit) + [.coreFoundation, .nio, .floor] }

    init?(name: String) {
        guard let subject = Subject.all.first(where: { $0.description == name.lowercased() }) else { return nil }
        self = subject
    }

    /// Whether this is one of RunLoopKit's backends.
    var isKit: Bool { if case .kit = self { true } else { false } }
}
