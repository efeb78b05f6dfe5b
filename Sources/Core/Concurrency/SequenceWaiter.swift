/// The consumer's side of a sequence a loop serves: one `next()` at a time waits here, and
/// the sequence's source is in the loop only while it does.
///
/// Why only then: a level-triggered descriptor (behaviour contract D2) that stays ready would
/// be handled in every pass while nobody asked for the next element (the loop would spin), and
/// a port source would take messages that nobody asked for yet (they would pile up outside
/// the port, out of its capacity's reach). So the source joins the loop's mode when `next()`
/// starts waiting and leaves it when the wait ends (the loop handed an element, the task was
/// cancelled, or the loop was torn down), and the iterator, once dropped, invalidates it.
///
/// The element is handed on the loop's thread (the source's callout), which also takes the
/// source out of the mode before the consumer resumes. The source's `cancel` callout tells
/// the waiter that it left a mode: when the loop was torn down meanwhile (or invalidated the
/// source), the waiting consumer gets a ``LoopSequenceError``.
final class SequenceWaiter<Element: Sendable>: Sendable {
    typealias Outcome = Result<Element?, LoopSequenceError>

    private struct State {
        /// The consumer waiting for an element.
        var pending: CheckedContinuation<Outcome, Never>?
        /// The consuming task was cancelled: no wait starts any more.
        var cancelled = false
        /// The iterator owns the source; its callbacks own this waiter.
        weak var source: Loop.Source?
    }

    let loop: Loop
    let mode: Loop.Mode
    /// Called once a wait's source is in the loop (tests that act while a consumer waits).
    let onWaiting: (@Sendable () -> Void)?
    private let state = Lock(State())

    init(loop: Loop, mode: Loop.Mode, onWaiting: (@Sendable () -> Void)?) {
        self.loop = loop
        self.mode = mode
        self.onWaiting = onWaiting
    }

    /// Sets the source whose callouts call ``handOver(taking:)`` and ``sourceLeft(_:)``.
    func attach(_ source: Loop.Source) {
        state.withLock { $0.source = source }
    }

    /// Waits until the loop hands an element (`nil` for the end of the sequence, or when the
    /// task is cancelled) or fails.
    func next(isolation actor: isolated (any Actor)?) async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation(isolation: actor) { (continuation: CheckedContinuation<Outcome, Never>) in
                startWaiting(continuation)
            }
        } onCancel: {
            cancel()
        }
    }

    private func startWaiting(_ continuation: CheckedContinuation<Outcome, Never>) {
        let source: Loop.Source? = state.withLock { state in
            guard !state.cancelled else { return nil }
            state.pending = continuation
            return state.source
        }
        guard let source else {
            continuation.resume(returning: .success(nil))
            return
        }
        loop.add(source, to: mode)
        // A torn-down loop refuses the source, and one torn down from now on takes it out
        // again and says so through `sourceLeft`: either way the consumer hears of it.
        if loop.hasEnded {
            fail(.loopEnded)
        } else if !source.isValid {
            fail(.sourceInvalidated)
        } else if state.withLock({ $0.cancelled }) {
            // Cancelled before the source joined: `cancel()` found nothing to take out.
            loop.remove(source, from: mode)
        } else {
            onWaiting?()
        }
    }

    /// On the loop's thread, from the source's callout: when a consumer waits, hands it what
    /// `take` returns (`.some(nil)` ends the sequence; `nil` means nothing yet, and the
    /// consumer goes on waiting), after taking the source out of the mode.
    ///
    /// `take` runs under the waiter's lock, so a cancellation cannot come between taking a
    /// message and handing it: a message taken is always handed.
    ///
    /// - Returns: whether an element was handed.
    @discardableResult
    func handOver(taking take: () -> Element??) -> Bool {
        let (continuation, element, source): (CheckedContinuation<Outcome, Never>?, Element?, Loop.Source?) =
            state.withLock { state in
                guard let pending = state.pending else { return (nil, nil, state.source) }
                guard let element = take() else { return (nil, nil, nil) }
                state.pending = nil
                return (pending, element, state.source)
            }
        // No consumer waits (it was cancelled, or was handed an element in this pass): the
        // source must not stay in the mode, where a ready descriptor would keep the loop busy.
        if let source { loop.remove(source, from: mode) }
        continuation?.resume(returning: .success(element))
        return continuation != nil
    }

    /// The consuming task was cancelled: ends the wait with `nil` and takes the source out.
    private func cancel() {
        let (continuation, source): (CheckedContinuation<Outcome, Never>?, Loop.Source?) = state.withLock { state in
            state.cancelled = true
            defer { state.pending = nil }
            return (state.pending, state.source)
        }
        if let continuation {
            if let source { loop.remove(source, from: mode) }
            continuation.resume(returning: .success(nil))
        }
    }

    /// The source's `cancel` callout: it left a mode. When the loop was torn down, or the
    /// source invalidated, the waiting consumer fails; otherwise the source left because a
    /// wait ended, and nothing is to be done.
    func sourceLeft(_ loop: Loop) {
        if loop.hasEnded {
            fail(.loopEnded)
        } else if let source = state.withLock({ $0.source }), !source.isValid {
            fail(.sourceInvalidated)
        }
    }

    private func fail(_ error: LoopSequenceError) {
        let continuation = state.withLock { state in
            defer { state.pending = nil }
            return state.pending
        }
        continuation?.resume(returning: .failure(error))
    }
}
