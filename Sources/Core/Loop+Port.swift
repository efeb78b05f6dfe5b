import DequeModule

extension Loop {
    /// A message queue that wakes the loops of the sources watching it.
    ///
    /// Any thread may ``send(_:)``; a ``Source`` made with ``Source/init(port:order:handler:)``
    /// receives the messages on its loop's thread, in the order sent. A port is backed by an
    /// eventfd that the loop's backend watches, so a message wakes the loop by itself.
    public final class Port<Message: Sendable>: Sendable {
        /// Signalled once per batch of messages: while the port is signalled, sends only queue.
        private let counter: EventCounter
        /// The eventfd the loop's backend watches.
        var eventDescriptor: Int32 { counter.descriptor }
        private let queue = Lock<(messages: Deque<Message>, signalled: Bool)>(([], false))

        /// Creates a port.
        ///
        /// - Throws: ``SystemError`` when the process is out of descriptors (`eventfd`).
        public init() throws(SystemError) {
            counter = try EventCounter()
        }

        deinit { counter.close() }

        /// Queues `message` and makes the port ready. Safe to call from any thread.
        public func send(_ message: sending Message) {
            let mustSignal = queue.withLock { queue in
                queue.messages.append(message)
                defer { queue.signalled = true }
                return !queue.signalled
            }
            if mustSignal { counter.signal() }
        }

        /// Puts messages a source did not deliver back at the front, ahead of those sent since,
        /// and makes the port ready again for whoever receives from it next.
        func putBack(_ messages: Deque<Message>) {
            let mustSignal = queue.withLock { queue in
                queue.messages.prepend(contentsOf: messages)
                defer { queue.signalled = true }
                return !queue.signalled
            }
            if mustSignal { counter.signal() }
        }

        /// Takes every queued message; the port is no longer ready unless more arrive.
        func receiveAll() -> Deque<Message> {
            // Read the eventfd before taking the queue: a send racing with us either lands
            // before the take (and is taken) or writes the eventfd again after it.
            counter.drain()
            return queue.withLock { queue in
                queue.signalled = false
                defer { queue.messages.removeAll() }
                return queue.messages
            }
        }
    }
}
