internal import CGLib
internal import RunLoopGSourceSupport
import RunLoopKit

/// The GLib source attached for one loop, if any: one per loop (the loop keeps it as an
/// attachment, weakly; the source and the ``GLibAttachment`` hold it), so that a second attach
/// is refused and the loop's end destroys the source.
///
/// Attach, detach and the loop's end all happen on the loop's thread; the lock makes
/// ``GLibAttachment/isAttached`` safe from any thread.
final class GLibAttachmentRegistry: LoopAttachment {
    /// A `GSource *` with a reference the registry owns while the source is attached.
    private struct Attached: @unchecked Sendable {
        let source: UnsafeMutablePointer<GSource>
        let generation: UInt64
    }

    private struct State {
        var attached: Attached?
        var generations: UInt64 = 0
    }

    private let state = Lock(State())

    /// The loop's registry: the live one, or a new one.
    static func of(_ loop: Loop) -> GLibAttachmentRegistry {
        loop.attachment(ObjectIdentifier(GLibAttachmentRegistry.self)) { GLibAttachmentRegistry() }
    }

    var isAttached: Bool { state.withLock { $0.attached != nil } }

    func isAttached(generation: UInt64) -> Bool {
        state.withLock { $0.attached?.generation == generation }
    }

    /// Records `source` (and the reference the caller hands over) as attached; its generation.
    func record(_ source: UnsafeMutablePointer<GSource>) -> UInt64 {
        state.withLock { state in
            trap(unless: state.attached == nil, "GLibAttachmentRegistry: a source is attached already")
            state.generations += 1
            state.attached = Attached(source: source, generation: state.generations)
            return state.generations
        }
    }

    /// Takes the attached source out if it is `generation`'s (any, when nil); the caller then
    /// owns its reference.
    func take(generation: UInt64?) -> UnsafeMutablePointer<GSource>? {
        state.withLock { state in
            guard let attached = state.attached, generation == nil || attached.generation == generation else {
                return nil
            }
            state.attached = nil
            return attached.source
        }
    }

    /// The loop's thread ended (it ran its teardown): destroy the source, whose descriptor is
    /// closed, so that its context neither polls a number that may be reused nor spins.
    func loopDidEnd() {
        guard let source = take(generation: nil) else { return }
        ObjectGSource.destroy(source)
    }
}
