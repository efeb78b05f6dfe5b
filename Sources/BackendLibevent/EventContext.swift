#if Libevent
import RunLoopCore

/// What a descriptor event's callback needs: the token and descriptor to report, and where.
///
/// libevent hands the callback an untyped pointer to this object. The backend keeps the object
/// alive for exactly as long as its event exists (it frees the event before dropping the
/// object), and callbacks run only inside the backend's own wait, on the loop's thread.
final class EventContext {
    let token: Token
    let descriptor: Int32
    let collector: ReadyCollector

    init(token: Token, descriptor: Int32, collector: ReadyCollector) {
        self.token = token
        self.descriptor = descriptor
        self.collector = collector
    }
}
#endif
