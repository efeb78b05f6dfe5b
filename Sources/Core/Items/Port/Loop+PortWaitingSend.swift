extension Loop.Port {
    /// Queues `message`, first waiting for room while the port is full: a slow receiver
    /// pushes back on its senders. Safe to call from any task.
    ///
    /// Waiting senders are admitted first come first served, each as soon as a receiver takes
    /// a message (``trySend(_:)`` does not jump ahead of them). A port with room, or an
    /// unbounded one, queues at once without suspending.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while waiting: the sender
    ///   stops waiting and its message is not queued (a sender that did not have to wait is
    ///   not affected by cancellation). ``PortClosedError`` when the port is or becomes closed
    ///   before the message was queued.
    public func sendWaitingForRoom(_ message: sending Message) async throws {
        let first: FirstTry = state.withLock { state in
            if state.isClosed { return .closed }
            if state.waitingSenders.isEmpty, state.hasRoom { return .queued(signal: state.queue(message)) }
            defer { state.nextSenderID += 1 }
            return .mustWait(id: state.nextSenderID)
        }
        switch first {
        case let .queued(signal):
            perform(PortState<Message>.Wakes(signal: signal))
        case .closed:
            throw PortClosedError()
        case let .mustWait(id):
            // A cancellation that came after the wait ended left its mark: remove it.
            defer { _ = state.withLock { $0.cancelledSenders.remove(id) } }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    wait(id: id, with: message, resuming: continuation)
                }
            } onCancel: {
                cancelWaitingSender(id)
            }
        }
    }

    /// Puts a sender in line, unless its task was cancelled already, the port closed, or room
    /// appeared since its first try.
    private func wait(id: UInt64, with message: Message, resuming continuation: CheckedContinuation<Void, any Error>) {
        var watchers: [CheckedContinuation<Void, Never>] = []
        let outcome: LineOutcome = state.withLock { state in
            if state.cancelledSenders.remove(id) != nil { return .failed(CancellationError()) }
            if state.isClosed { return .failed(PortClosedError()) }
            if state.waitingSenders.isEmpty, state.hasRoom { return .queued(signal: state.queue(message)) }
            state.waitingSenders.append(.init(id: id, message: message, continuation: continuation))
            if !state.lineWatchers.isEmpty {
                let waiting = state.waitingSenders.count
                watchers = state.lineWatchers.filter { $0.count <= waiting }.map(\.continuation)
                state.lineWatchers.removeAll { $0.count <= waiting }
            }
            return .waiting
        }
        switch outcome {
        case .waiting:
            for watcher in watchers { watcher.resume() }
        case let .queued(signal):
            perform(PortState<Message>.Wakes(signal: signal))
            continuation.resume()
        case let .failed(error):
            continuation.resume(throwing: error)
        }
    }

    /// Returns once `count` senders wait in line (at once if they do): for tests that start
    /// senders and must know they wait before going on.
    package func untilSendersWait(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.waitingSenders.count < count else { return true }
                state.lineWatchers.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// How many senders wait for room now. Safe to call from any thread.
    package var waitingSenderCount: Int { state.withLock { $0.waitingSenders.count } }

    /// Takes a cancelled sender out of line, or marks it cancelled when it is not in line yet
    /// (its cancellation handler ran before it could wait).
    private func cancelWaitingSender(_ id: UInt64) {
        let sender: CheckedContinuation<Void, any Error>? = state.withLock { state in
            if let index = state.waitingSenders.firstIndex(where: { $0.id == id }) {
                return state.waitingSenders.remove(at: index).continuation
            }
            state.cancelledSenders.insert(id)
            return nil
        }
        sender?.resume(throwing: CancellationError())
    }
}

/// What a waiting send found on its first try.
private enum FirstTry {
    case queued(signal: Bool)
    case closed
    case mustWait(id: UInt64)
}

/// What became of a sender getting in line.
private enum LineOutcome {
    case waiting
    case queued(signal: Bool)
    case failed(any Error)
}
