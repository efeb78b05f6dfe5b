import DequeModule

/// What a ``Loop/Port`` holds behind its lock: the queued messages, how many places they and
/// the messages a source took for delivery occupy, and the senders waiting for a place.
///
/// A message holds its place (behaviour contract D4) from the moment it is queued until it is
/// handed to a receiver (a source's handler, or the consumer of
/// ``Loop/Port/messages(on:in:)``): the messages a source took in a batch but has not handed
/// yet still count, so a capacity bounds every message the port has accepted and no one has
/// received.
struct PortState<Message: Sendable> {
    /// A sender suspended in ``Loop/Port/sendWaitingForRoom(_:)`` with its message.
    struct WaitingSender {
        let id: UInt64
        let message: Message
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// What the caller does once the lock is released.
    struct Wakes {
        /// Write the eventfd: the port went from not ready to ready.
        var signal = false
        /// Senders whose messages were queued, to resume (in order).
        var admitted: [CheckedContinuation<Void, any Error>] = []
    }

    let capacity: Int?
    var messages: Deque<Message> = []
    /// The eventfd was written and no receiver has drained it since: sends only queue.
    var signalled = false
    /// Messages a source took in a batch and has not handed to its handler yet (counted only
    /// for a port with a capacity).
    var inDelivery = 0
    /// Senders waiting for a place, first come first served.
    var waitingSenders: Deque<WaitingSender> = []
    /// Senders whose task was cancelled before they waited (see
    /// ``Loop/Port/sendWaitingForRoom(_:)``); removed by the sender when it sees its entry.
    var cancelledSenders: Set<UInt64> = []
    var nextSenderID: UInt64 = 0
    var isClosed = false
    /// Tests waiting until so many senders wait (``Loop/Port/untilSendersWait(_:)``).
    var lineWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(capacity: Int?) {
        self.capacity = capacity
    }

    /// Whether one more message fits, ignoring the waiting senders.
    var hasRoom: Bool {
        guard let capacity else { return true }
        return messages.count + inDelivery < capacity
    }

    /// Queues `message` and says whether the eventfd must be written.
    mutating func queue(_ message: Message) -> Bool {
        messages.append(message)
        return markSignalled()
    }

    /// Marks the port ready; true when the caller must write the eventfd (it was not).
    mutating func markSignalled() -> Bool {
        defer { signalled = true }
        return !signalled
    }

    /// Moves the messages of waiting senders into the queue while there is room, first come
    /// first served. Called whenever a place is freed, so that a place freed never goes to a
    /// sender that came later than one already waiting.
    mutating func admitWaitingSenders(into wakes: inout Wakes) {
        while hasRoom, let sender = waitingSenders.popFirst() {
            if queue(sender.message) { wakes.signal = true }
            wakes.admitted.append(sender.continuation)
        }
    }
}
