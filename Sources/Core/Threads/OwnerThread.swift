internal import CRunLoopSupport
import Glibc

/// A thread as messages name it: its name and kernel thread id, e.g. `"worker" (tid 4242)`.
struct ThreadIdentity: Sendable, CustomStringConvertible {
    /// The kernel thread id (gettid(2)).
    let tid: Int32
    /// The thread's name (the first 15 bytes Linux keeps).
    let name: String

    /// The calling thread.
    static var current: ThreadIdentity {
        var buffer = [UInt8](repeating: 0, count: 16)
        buffer.withUnsafeMutableBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { rlk_get_thread_name($0.baseAddress!) }
        }
        let name = buffer.prefix { $0 != 0 }
        return ThreadIdentity(tid: rlk_gettid(), name: String(decoding: name, as: UTF8.self))
    }

    var description: String { "thread \"\(name)\" (tid \(tid))" }
}

/// The thread a loop belongs to, recorded when the loop is bound to it (``ThreadBinding``),
/// so that a message about a loop touched from the wrong thread can name both threads.
final class OwnerThread: Sendable {
    private let identity = Lock<ThreadIdentity?>(nil)

    /// Records the calling thread as the owner (called once, by the binding thread).
    func recordCurrent() {
        let current = ThreadIdentity.current
        identity.withLock { $0 = current }
    }

    /// The owner, or `nil` before the loop was bound to its thread.
    var recorded: ThreadIdentity? { identity.withLock { $0 } }
}
