import RunLoopKit

/// What a scenario measures: a RunLoopKit backend, or one of the references.
enum Subject: Hashable, Sendable, CustomStringConvertible {
    /// A RunLoopKit loop on the given backend, running itself on its own thread.
    case kit(BackendKind)
    /// A RunLoopKit loop on the given backend as `Loop.main`, run by a process's main thread:
    /// measured in a child process of its own (see `MainSubject`), as a program whose main
    /// thread runs the main loop has it.
    case main(BackendKind)
    /// A RunLoopKit loop driven by GLib's main loop on its own thread (see `Embedding`).
    case embedded(Embedding)
    /// Foundation's CoreFoundation run loop on Linux.
    case coreFoundation
    /// SwiftNIO's event loop: one thread of a `MultiThreadedEventLoopGroup`.
    case nio
    /// GLib alone: a `GMainLoop` on a context of its own, on its own thread.
    case glib
    /// The same scenario written directly on the system calls: the lower bound.
    case floor

    var description: String {
        switch self {
        case let .kit(kind): Self.name(of: kind)
        case let .main(kind): Self.name(of: kind) + "-main"
        case let .embedded(embedding): embedding.name
        case .coreFoundation: "cf"
        case .nio: "nio"
        case .glib: "glib"
        case .floor: "floor"
        }
    }

    /// A backend's subject name: its kind's name, except GLib's, whose name `glib` is GLib
    /// alone's (the reference); a RunLoopKit loop on the GLib backend is `glib-backend`.
    static func name(of kind: BackendKind) -> String {
        kind.name == "glib" ? "glib-backend" : kind.name
    }

    /// Every subject this build can measure: the build's backends (a backend trait enabled on
    /// the RunLoopKit dependency in Package.swift adds its subject here), the same as the main
    /// loop, the embeddings, then the references.
    static var all: [Subject] {
        BackendKind.allCases.map(Subject.kit) + BackendKind.allCases.map(Subject.main)
            + Embedding.all.map(Subject.embedded) + [
                .coreFoundation, .nio, .glib, .floor,
            ]
    }

    init?(name: String) {
        guard let subject = Subject.all.first(where: { $0.description == name.lowercased() }) else { return nil }
        self = subject
    }

    /// Whether this is a RunLoopKit loop that runs itself (one of the build's backends).
    var isKit: Bool { if case .kit = self { true } else { false } }

    /// Whether this is a backend's loop as `Loop.main` (measured in a child process whose main
    /// thread runs it).
    var isMain: Bool { if case .main = self { true } else { false } }

    /// Whether this is a RunLoopKit loop, running itself or driven by another loop: the
    /// subjects `KitHost.start(_:setup:)` starts.
    var isKitLoop: Bool {
        switch self {
        case .kit, .main, .embedded: true
        case .coreFoundation, .nio, .glib, .floor: false
        }
    }
}
