import RunLoopKit
import RunLoopKitGLib

/// A RunLoopKit loop embedded in GLib's main loop: the subject `KitHost` runs as a `GMainLoop`
/// on a context of its own, with the loop attached to that context through the embedding API.
///
/// The wake, timer, throughput and idle scenarios measure an embedding as they measure a
/// backend (`KitHost.start(_:setup:)`); the scenarios that need a loop to run itself (pass,
/// scale, sleep-coalescing, the main-queue child) skip it and say why.
struct Embedding: Hashable, Sendable {
    /// The subject's name (`--subjects`, the tables).
    let name: String
    /// The backend of the embedded loop.
    let backend: BackendKind
    /// Attaches `loop` to the GMainContext `context` (a `GMainContext *`), on the thread that
    /// runs both, before GLib's loop starts; returns what detaches it, called on that thread
    /// after GLib's loop has returned. The attached loop must serve `.default` (or the common
    /// modes): the scenarios' items, and `KitHost`'s quit source, are there.
    let attach: @Sendable (_ loop: Loop, _ context: OpaquePointer) throws -> @Sendable () -> Void

    /// The embeddings this build measures: RunLoopKitGLib's `attach(to:)`, with the loop on
    /// epoll and on io_uring (the backends that offer a host descriptor).
    static let all: [Embedding] = [
        Embedding(name: "embedded-glib", backend: .epoll, attach: attachToGLib),
        Embedding(name: "embedded-glib-uring", backend: .uring, attach: attachToGLib),
    ]

    /// `Loop.attach(to:)` on the subject's context, in `.default` (the scenarios' mode).
    private static func attachToGLib(_ loop: Loop, _ context: OpaquePointer) throws -> @Sendable () -> Void {
        let attachment = try loop.attach(to: GLibMainContext(context))
        return { attachment.detach() }
    }

    static func == (lhs: Embedding, rhs: Embedding) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
