import DequeModule

extension Loop {
    /// A message queue that wakes the loops of the sources watching it.
    ///
    /// Any thread may send; a ``Source`` made with ``Source/init(port:order:handler:)``
    /// receives the messages on its loop's thread, in the order sent, and
    /// ``messages(on:in:)`` hands them to async code. A port is backed by an eventfd that the
    /// loop's backend watches, so a message wakes the loop by itself.
    ///
    /// A port made with ``init()`` is unbounded: ``send(_:)`` always queues. A port made with
    /// ``init(capacity:)`` holds at most that many messages that no receiver has taken: a full
    /// port refuses ``trySend(_:)`` (handing the message back) and makes
    /// ``sendWaitingForRoom(_:)`` wait, so a slow receiver pushes back on its senders instead
    /// of the queue growing without limit. A message holds its place from the moment it is
    /// queued until it is handed to a receiver: messages a source took from the port in a
    /// batch and has not yet handed to its handler still count.
    ///
    /// ``close()`` ends the port: waiting senders get ``PortClosedError``, later sends are
    /// refused, and receivers still get every message queued before.
    public final class Port<Message: Sendable>: Sendable {
        /// What ``trySend(_:)`` did with a message.
        public enum SendAttempt: Sendable {
            /// The message was queued.
            case sent
            /// The port held ``Port/capacity`` messages (or senders were waiting for room):
            /// the message, handed back, was not queued.
            case full(Message)
            /// The port was closed: the message, handed back, was not queued.
            case closed(Message)
        }

        /// What a receiver found when it took one message.
        enum Reception {
            case message(Message)
            /// Nothing queued; the port is open.
            case empty
            /// Nothing queued, and the port is closed: nothing more will come.
            case closed
        }

        /// Signalled once per batch of messages: while the port is signalled, sends only queue.
        private let counter: EventCounter
        /// The eventfd the loop's backend watches.
        var eventDescriptor: Int32 { counter.descriptor }
        /// The queue, the places taken and the waiting senders (see ``PortState``).
        let state: Lock<PortState<Message>>

        /// How many messages the port holds before it is full; `nil` for an unbounded port.
        public let capacity: Int?

        /// Creates an unbounded port: ``send(_:)`` always queues.
        ///
        /// - Throws: ``SystemError`` when the process is out of descriptors (`eventfd`).
        public init() throws(SystemError) {
            counter = try EventCounter()
            capacity = nil
            state = Lock(PortState(capacity: nil))
        }

        /// Creates a port that holds at most `capacity` messages no receiver has taken.
        ///
        /// - Parameter capacity: at least 1.
        /// - Throws: ``ArgumentError`` naming `capacity` when it is below 1; ``SystemError``
        ///   when the process is out of descriptors (`eventfd`).
        public init(capacity: Int) throws {
            guard capacity >= 1 else {
                throw ArgumentError(
                    argument: "capacity", value: "\(capacity)", reason: "a port's capacity must be at least 1")
            }
            counter = try EventCounter()
            self.capacity = capacity
            state = Lock(PortState(capacity: capacity))
        }

        // No sender can be waiting here: a waiting sender holds the port.
        deinit { counter.close() }

        /// Whether ``close()`` was called. Safe to call from any thread.
        public var isClosed: Bool { state.withLock { $0.isClosed } }

        /// Queues `message` and makes the port ready. Safe to call from any thread.
        ///
        /// On a port with a ``capacity``, use ``trySend(_:)`` or ``sendWaitingForRoom(_:)``
        /// unless the sender knows there is room: sending to a full port, or to a closed one,
        /// is a programming error that traps with a message (the message is never dropped
        /// silently, and never queued beyond the capacity).
        public func send(_ message: sending Message) {
            switch trySend(message) {
            case .sent:
                break
            case .full:
                trap(
                    "Loop.Port.send(_:): the port is full (capacity \(capacity ?? 0)); use trySend(_:) or sendWaitingForRoom(_:)"
                )
            case .closed:
                trap("Loop.Port.send(_:): the port is closed")
            }
        }

        /// Queues `message` if the port has room, without waiting. Safe to call from any
        /// thread.
        ///
        /// A port is full while it holds ``capacity`` messages no receiver has taken, and also
        /// while senders wait in ``sendWaitingForRoom(_:)``: they came first. An unbounded
        /// port is never full.
        ///
        /// - Returns: ``SendAttempt/sent``, or the message handed back with why it was not
        ///   queued.
        public func trySend(_ message: sending Message) -> SendAttempt {
            let (attempt, signal): (SendAttempt, Bool) = state.withLock { state in
                if state.isClosed { return (.closed(message), false) }
                guard state.waitingSenders.isEmpty, state.hasRoom else { return (.full(message), false) }
                return (.sent, state.queue(message))
            }
            if signal { counter.signal() }
            return attempt
        }

        /// Ends the port. Safe to call from any thread; a second call has no effect.
        ///
        /// Senders waiting in ``sendWaitingForRoom(_:)`` throw ``PortClosedError`` (their
        /// messages are not queued); later sends are refused (``trySend(_:)`` hands the message
        /// back, ``sendWaitingForRoom(_:)`` throws, ``send(_:)`` traps). Messages queued before
        /// stay: receivers still get them, and a ``messages(on:in:)`` sequence ends once it
        /// has handed the last one.
        public func close() {
            let (senders, signal): ([CheckedContinuation<Void, any Error>], Bool) = state.withLock { state in
                guard !state.isClosed else { return ([], false) }
                state.isClosed = true
                defer { state.waitingSenders.removeAll() }
                // Made ready so that a receiver waiting for a message learns that none will come.
                return (state.waitingSenders.map(\.continuation), state.markSignalled())
            }
            if signal { counter.signal() }
            for sender in senders { sender.resume(throwing: PortClosedError()) }
        }

        /// Writes the eventfd if asked to, then resumes the senders whose messages were queued.
        func perform(_ wakes: PortState<Message>.Wakes) {
            if wakes.signal { counter.signal() }
            for sender in wakes.admitted { sender.resume() }
        }

        /// Takes every queued message for a source to deliver; the port is no longer ready
        /// unless more arrive. The messages keep their places until ``handedOver()``.
        func receiveAll() -> Deque<Message> {
            // Read the eventfd before taking the queue: a send racing with us either lands
            // before the take (and is taken) or writes the eventfd again after it.
            counter.drain()
            return state.withLock { state in
                state.signalled = false
                if state.capacity != nil { state.inDelivery += state.messages.count }
                defer { state.messages.removeAll() }
                return state.messages
            }
        }

        /// A message a source took with ``receiveAll()`` is being handed to its handler: its
        /// place is free, for the first waiting sender.
        func handedOver() {
            guard capacity != nil else { return }
            var wakes = PortState<Message>.Wakes()
            state.withLock { state in
                state.inDelivery -= 1
                state.admitWaitingSenders(into: &wakes)
            }
            perform(wakes)
        }

        /// Puts messages a source did not deliver back at the front, ahead of those sent since,
        /// and makes the port ready again for whoever receives from it next.
        func putBack(_ messages: Deque<Message>) {
            let mustSignal = state.withLock { state in
                if state.capacity != nil { state.inDelivery -= messages.count }
                state.messages.prepend(contentsOf: messages)
                return state.markSignalled()
            }
            if mustSignal { counter.signal() }
        }

        /// Hands the messages queued now to `handler`, one by one, while `source` stays valid;
        /// the rest go back to the port. A port source's delivery.
        ///
        /// - Returns: how many messages were handed.
        func deliverQueued(to handler: (Message) -> Void, whileValid source: Source) -> Int {
            var messages = receiveAll()
            var delivered = 0
            while source.isValid, let message = messages.popFirst() {
                handedOver()
                handler(message)
                delivered += 1
            }
            if !messages.isEmpty { putBack(messages) }
            return delivered
        }

        /// Takes the first message, on the thread of a loop that found the port ready: drains
        /// the eventfd, and writes it again when messages remain, so that the port stays ready
        /// exactly while it holds messages.
        func receiveOne() -> Reception {
            counter.drain()
            var wakes = PortState<Message>.Wakes()
            let reception: Reception = state.withLock { state in
                state.signalled = false
                guard let message = state.messages.popFirst() else { return state.isClosed ? .closed : .empty }
                state.admitWaitingSenders(into: &wakes)
                if !state.messages.isEmpty, state.markSignalled() { wakes.signal = true }
                return .message(message)
            }
            perform(wakes)
            return reception
        }

        /// Takes the first message from any thread, without touching the eventfd: a port that
        /// was ready stays so (a receiver that finds it empty takes nothing).
        func takeOne() -> Reception {
            var wakes = PortState<Message>.Wakes()
            let reception: Reception = state.withLock { state in
                guard let message = state.messages.popFirst() else { return state.isClosed ? .closed : .empty }
                state.admitWaitingSenders(into: &wakes)
                return .message(message)
            }
            perform(wakes)
            return reception
        }
    }
}
