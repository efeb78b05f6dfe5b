/// A source that cannot be watched, or (``source`` `nil`) the dispatch main queue, and why: to
/// be reported through ``Loop/logger`` and the source invalidated by the caller once no lock is
/// held (invalidating calls the source's `cancel` callbacks, and a log handler is the user's
/// code). See `Loop.invalidateUnwatchable(_:)`.
struct Unwatchable {
    /// `nil`: the dispatch main queue's descriptor.
    let source: Loop.Source?
    let descriptor: Int32
    let reason: String
    /// What the backend threw when registering failed; `nil` for a closed descriptor.
    let error: (any Error)?

    /// `source`'s descriptor `fd` was closed (`now` is `nil`) or reused for another file
    /// behind its back (D8).
    static func closed(_ source: Loop.Source, descriptor fd: Int32, nowNames now: FileIdentity?) -> Unwatchable {
        let what = now == nil ? "was closed" : "was closed and reused for another file"
        return Unwatchable(
            source: source, descriptor: fd,
            reason:
                "descriptor \(fd) \(what) while its source was in a loop; invalidate a source before closing its descriptor",
            error: nil
        )
    }
}
