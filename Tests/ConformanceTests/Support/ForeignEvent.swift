#if Libevent
internal import CLibevent
import RunLoopKit

/// A libevent event made through libevent's C API on a loop's `event_base`, with a Swift
/// closure as its callback: what a user's own libevent code does with `Loop.withEventBase(_:)`.
/// Loop thread only.
final class ForeignEvent {
    private final class Callback {
        let body: (Int16) -> Void
        init(_ body: @escaping (Int16) -> Void) { self.body = body }
    }

    private let event: OpaquePointer
    /// Kept alive for as long as the event exists: libevent holds it unretained.
    private let callback: Callback

    /// `event_new` on `base`: a timer when `descriptor` is -1, otherwise a readable event.
    ///
    /// - Parameter body: called with libevent's `what` flags (`EV_TIMEOUT` = 1, `EV_READ` = 2).
    init?(base: OpaquePointer, descriptor: Int32 = -1, persist: Bool = false, _ body: @escaping (Int16) -> Void) {
        callback = Callback(body)
        var what: Int16 = descriptor >= 0 ? Int16(EV_READ) : 0
        if persist { what |= Int16(EV_PERSIST) }
        let trampoline: event_callback_fn = { _, what, context in
            Unmanaged<Callback>.fromOpaque(context!).takeUnretainedValue().body(what)
        }
        guard let event = event_new(base, descriptor, what, trampoline, Unmanaged.passUnretained(callback).toOpaque())
        else {
            return nil
        }
        self.event = event
    }

    deinit { event_free(event) }

    /// `event_add`, with an optional timeout (microseconds, rounded up); false on failure.
    func add(timeout: Duration? = nil) -> Bool {
        guard let timeout else { return event_add(event, nil) == 0 }
        var interval = timeout.timevalRoundedUp
        return event_add(event, &interval) == 0
    }

    /// `event_del`.
    func remove() { event_del(event) }
}
#endif
