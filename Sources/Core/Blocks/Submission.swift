/// What a submitted block produced, or why it never ran.
enum SubmissionOutcome<Value> {
    case value(Value)
    /// The block threw.
    case thrown(any Error)
    case notRun(SubmitError)
}

/// The meeting point of a `submit` caller, suspended on a continuation, and its block.
///
/// Exactly one of these answers the caller, whichever comes first: the block starting on the
/// loop's thread (the caller then gets its value, even if cancelled meanwhile), the loop
/// refusing it, the task's cancellation while the block waits (the block is taken out of the
/// queue, or skipped if a drain already took it), or the block's closure being freed unrun
/// (teardown dropped it: ``DroppedSubmissionAnswer``). Every path goes through `phase`, under
/// one lock, so no two answer and none is missed.
///
/// Behaviour contract: the block is an ordinary common-modes block (B2: FIFO with every other
/// block); a loop torn down with it queued releases it unrun (L5), which is how its caller
/// hears `loopEnded`; a ``LoopThread`` past `stop()` refuses it (E2).
final class Submission<Value>: Sendable {
    typealias Continuation = CheckedContinuation<SubmissionOutcome<Value>, Never>

    private enum Phase {
        /// Made; `begin` has not run.
        case created
        /// Cancelled before `begin`: it answers at once, without queuing.
        case cancelledBeforeQueuing
        /// `begin` is queuing the block and has not learnt its number yet. Cancellation or a
        /// drop meanwhile is noted in these flags and answered by `begin` once it has.
        case queuing(cancelled: Bool, dropped: Bool)
        /// Queued as this number in the loop's ``BlockQueue``.
        case queued(UInt64)
        /// Answered, or the block started: nothing more happens here.
        case over
    }

    private struct State {
        var phase = Phase.created
        var continuation: Continuation?
    }

    private let state = Lock(State())
    private let loop: Loop

    init(loop: Loop) { self.loop = loop }

    /// Queues `body` on the loop, in the common modes; `continuation` is answered once.
    func begin(_ continuation: Continuation, _ body: SentBody<Value>) {
        let proceed: Bool = state.withLock { state in
            guard case .created = state.phase else { return false }
            state.phase = .queuing(cancelled: false, dropped: false)
            state.continuation = continuation
            return true
        }
        guard proceed else {
            continuation.resume(returning: .notRun(.cancelled))
            return
        }
        let answerIfDropped = DroppedSubmissionAnswer(self)
        let block = PendingBlock(modes: .common) { [self] in
            withExtendedLifetime(answerIfDropped) {}
            // Skipped when cancelled after a drain took it from the queue (nothing to remove).
            guard let continuation = start() else { return }
            let outcome: SubmissionOutcome<Value>
            do { outcome = .value(try body.run()) } catch { outcome = .thrown(error) }
            continuation.resume(returning: outcome)
        }
        let sequence = loop.enqueueNumbered(block)
        queued(as: sequence)
    }

    /// After queuing: records the number, or answers what happened meanwhile.
    private func queued(as sequence: UInt64?) {
        let (answer, remove): (SubmissionOutcome<Value>?, Bool) = state.withLock { state in
            guard case let .queuing(cancelled, dropped) = state.phase else { return (nil, false) } // started
            guard let sequence else {
                state.phase = .over
                return (.notRun(.refused), false)
            }
            if cancelled {
                state.phase = .over
                return (.notRun(.cancelled), true)
            }
            if dropped {
                state.phase = .over
                return (.notRun(.loopEnded), false)
            }
            state.phase = .queued(sequence)
            return (nil, false)
        }
        guard let answer else { return }
        takeContinuation()?.resume(returning: answer)
        if remove, let sequence { withExtendedLifetime(loop.blocks.remove(sequence: sequence)) {} }
    }

    /// The block is starting on the loop's thread: the continuation to answer, or `nil` when
    /// the caller was already answered (cancelled).
    private func start() -> Continuation? {
        state.withLock { state in
            switch state.phase {
            case .queued, .queuing(cancelled: false, dropped: false):
                state.phase = .over
                return state.continuation.take()
            default:
                return nil
            }
        }
    }

    /// The awaiting task was cancelled: unless the block started, the caller is answered at
    /// once and the block leaves the queue (released here, with no lock held).
    func cancel() {
        let removing: UInt64? = state.withLock { state in
            switch state.phase {
            case .created:
                state.phase = .cancelledBeforeQueuing
                return nil
            case let .queuing(_, dropped):
                state.phase = .queuing(cancelled: true, dropped: dropped)
                return nil
            case let .queued(sequence):
                state.phase = .over
                return sequence
            case .cancelledBeforeQueuing, .over:
                return nil
            }
        }
        guard let removing else { return }
        takeContinuation()?.resume(returning: .notRun(.cancelled))
        withExtendedLifetime(loop.blocks.remove(sequence: removing)) {}
    }

    /// The block's closure was freed unrun (the loop was torn down with it queued, or it was
    /// refused or removed): answers the caller unless someone already did.
    fileprivate func dropped() {
        let answer: Bool = state.withLock { state in
            switch state.phase {
            case let .queuing(cancelled, _):
                state.phase = .queuing(cancelled: cancelled, dropped: true)
                return false
            case .queued:
                state.phase = .over
                return true
            case .created, .cancelledBeforeQueuing, .over:
                return false
            }
        }
        if answer { takeContinuation()?.resume(returning: .notRun(.loopEnded)) }
    }

    private func takeContinuation() -> Continuation? {
        state.withLock { $0.continuation.take() }
    }
}

/// The closure `submit` received as `sending`: no one else holds it, so it may cross to the
/// loop's thread, which alone calls it, once.
struct SentBody<Value>: @unchecked Sendable {
    let run: () throws -> sending Value
}

/// Held only by a submitted block's closure: freed with it, it tells the submission, which
/// answers its caller if the block never ran. This is how teardown hands each dropped
/// submission its error without a field in every queued ``PendingBlock`` (the same idea as
/// `LoopThread`'s waiting `perform`).
private final class DroppedSubmissionAnswer<Value>: Sendable {
    private let submission: Submission<Value>

    init(_ submission: Submission<Value>) { self.submission = submission }

    deinit { submission.dropped() }
}
