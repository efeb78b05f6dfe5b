import RunLoopKit

/// A backend that passes every call on to another, `inner` (a built-in one): the wrappers the
/// tests make (a third-party backend, one that counts registrations, breaks one promise or
/// reports a stale event) state only what they change.
protocol WrappingBackend: Backend {
    var inner: any Backend { get }
}

extension WrappingBackend {
    var waker: any BackendWaker { inner.waker }
    var embedding: EmbeddingSupport { inner.embedding }
    var ownSources: OwnSourceServing { inner.ownSources }

    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        try inner.register(descriptor, token: token, interest: interest)
    }

    func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        try inner.unregister(descriptor, token: token)
    }

    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        try inner.wait(timeout: timeout, into: &events)
    }
}
