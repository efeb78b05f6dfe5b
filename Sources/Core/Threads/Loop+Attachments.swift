/// An object another module of this package keeps per loop (the SwiftNIO adapter, say), told
/// when the loop ends.
package protocol LoopAttachment: AnyObject, Sendable {
    /// Called once when the loop's thread has ended and the loop was torn down (its queued
    /// blocks dropped, its timers invalidated), on that thread, with no lock held; or at once,
    /// on the calling thread, for an attachment made after that.
    func loopDidEnd()
}

/// The attachments of one loop, each by its key, held weakly.
///
/// Weakly, so that an attachment may hold its loop strongly without a cycle: the loop keeps
/// handing out the same object for as long as anyone holds it, which is all identity needs
/// (two references compared with `===` are both alive).
final class LoopAttachments: Sendable {
    private struct Entry {
        weak var object: (any LoopAttachment)?
    }

    private struct Table {
        var entries: [ObjectIdentifier: Entry] = [:]
        var hasEnded = false
    }

    // A leaf lock: nothing else is locked while it is held (`make` only builds an object).
    private let table = Lock(Table())

    /// The live attachment under `key`, or a new one from `make`, stored under `key`.
    func attachment<T: LoopAttachment>(_ key: ObjectIdentifier, orMake make: () -> T) -> T {
        let (attachment, isNewAfterEnd): (T, Bool) = table.withLock { table in
            if let existing = table.entries[key]?.object {
                guard let existing = existing as? T else {
                    trap(
                        "Loop.attachment(_:orMake:): the key is used for \(type(of: existing)), not \(T.self)")
                }
                return (existing, false)
            }
            let made = make()
            table.entries[key] = Entry(object: made)
            return (made, table.hasEnded)
        }
        if isNewAfterEnd { attachment.loopDidEnd() }
        return attachment
    }

    /// Tells every live attachment the loop ended; those made later are told as they are made.
    func loopDidEnd() {
        let live: [any LoopAttachment] = table.withLock { table in
            table.hasEnded = true
            return table.entries.values.compactMap(\.object)
        }
        for attachment in live { attachment.loopDidEnd() }
    }
}

extension Loop {
    /// The attachment stored under `key`, made with `make` (under a lock: it must only build
    /// the object) when there is none alive. Safe to call from any thread.
    ///
    /// The loop holds attachments weakly; while any reference to one lives, every call returns
    /// that same object. An attachment is told when the loop ends (``LoopAttachment/loopDidEnd()``).
    package func attachment<T: LoopAttachment>(_ key: ObjectIdentifier, orMake make: () -> T) -> T {
        attachments.attachment(key, orMake: make)
    }
}
