extension Loop.Port {
    /// The port's messages as an async sequence that `loop` serves in `mode`.
    ///
    /// ```swift
    /// for try await command in port.messages(on: worker.loop) {
    ///     handle(command)
    /// }
    /// ```
    ///
    /// Messages arrive in the order sent, none lost. Each `next()` takes a message queued in
    /// the port at once, without the loop; when there is none, a source on `loop` (in `mode`)
    /// waits for one and hands it over on the loop's thread. The source is in the loop only
    /// while a `next()` waits: messages the consumer has not asked for stay in the port,
    /// holding their places, so a port with a capacity still pushes back on its senders.
    ///
    /// The sequence ends (`nil`) when the port is closed and its last message handed over,
    /// and when the consuming task is cancelled (a message the loop handed before the
    /// cancellation is returned first; none is taken after). It throws
    /// ``LoopSequenceError/loopEnded`` when the loop's thread ends while the consumer waits,
    /// or when it would have to wait on a loop that has ended (messages already queued are
    /// still handed at once: taking them needs no loop); messages sent later stay in the
    /// port. A loop that is not running `mode` (or a common mode, for ``Loop/Mode/common``)
    /// does not serve the wait until it does.
    ///
    /// Receive from a port in one place at a time: with a second receiver (a sequence or a
    /// port source), each message goes to whichever takes it first.
    ///
    /// - Parameters:
    ///   - loop: the loop that serves the waits.
    ///   - mode: the mode the source joins while a consumer waits.
    public func messages(on loop: Loop, in mode: Loop.Mode = .default) -> Loop.PortMessages<Message> {
        Loop.PortMessages(port: self, loop: loop, mode: mode)
    }
}

extension Loop {
    /// A port's messages as an async sequence a loop serves: see
    /// ``Loop/Port/messages(on:in:)``.
    public struct PortMessages<Message: Sendable>: AsyncSequence, Sendable {
        /// A message sent to the port.
        public typealias Element = Message
        /// Thrown when the loop stops serving the sequence while its consumer waits.
        public typealias Failure = LoopSequenceError

        let port: Port<Message>
        let loop: Loop
        let mode: Mode
        /// Called each time a `next()` starts waiting on the loop (its source joined the
        /// mode): for tests that act while a consumer waits.
        package var onWaiting: (@Sendable () -> Void)?

        /// Makes an iterator; its source joins the loop only while its `next()` waits.
        public func makeAsyncIterator() -> Iterator {
            Iterator(port: port, receiver: PortReceiver(port: port, loop: loop, mode: mode, onWaiting: onWaiting))
        }

        /// Hands the port's messages to one consumer, in order. Not `Sendable`: one task
        /// iterates it.
        public struct Iterator: AsyncIteratorProtocol {
            /// A message sent to the port.
            public typealias Element = Message
            /// Thrown when the loop stops serving the sequence while its consumer waits.
            public typealias Failure = LoopSequenceError

            let port: Port<Message>
            let receiver: PortReceiver<Message>
            var iteration = SequenceIteration()

            /// The next message, waiting on the loop if none is queued; `nil` at the end.
            ///
            /// - Throws: ``LoopSequenceError`` when the loop's thread ended.
            public mutating func next() async throws(LoopSequenceError) -> Message? {
                try await next(isolation: nil)
            }

            /// The next message, waiting on the loop if none is queued; `nil` at the end.
            ///
            /// - Parameter actor: the caller's isolation, kept while waiting.
            /// - Throws: ``LoopSequenceError`` when the loop's thread ended.
            public mutating func next(
                isolation actor: isolated (any Actor)?
            ) async throws(LoopSequenceError) -> Message? {
                try await iteration.next(from: receiver.waiter, isolation: actor) {
                    switch port.takeOne() {
                    case let .message(message): .element(message)
                    case .closed: .end
                    case .empty: .nothing
                    }
                }
            }
        }
    }

    /// An iterator's port source and the wait it serves; the iterator's last copy going away
    /// invalidates the source.
    final class PortReceiver<Message: Sendable>: Sendable {
        let waiter: SequenceWaiter<Message>
        private let source: Source

        init(port: Port<Message>, loop: Loop, mode: Mode, onWaiting: (@Sendable () -> Void)?) {
            let waiter = SequenceWaiter<Message>(loop: loop, mode: mode, onWaiting: onWaiting)
            self.waiter = waiter
            source = Source(
                version1: .port(
                    port.eventDescriptor,
                    deliver: { _ in
                        // One message per wait, taken only when a consumer waits for it.
                        waiter.handOver {
                            switch port.receiveOne() {
                            case let .message(message): .some(message)
                            case .closed: .some(nil)
                            case .empty: nil
                            }
                        } ? 1 : 0
                    }, port: port),
                cancel: { loop, _ in waiter.sourceLeft(loop) })
            waiter.attach(source)
        }

        deinit { source.invalidate() }
    }
}

@available(*, unavailable, message: "one task iterates a sequence's iterator")
extension Loop.PortMessages.Iterator: Sendable {}
