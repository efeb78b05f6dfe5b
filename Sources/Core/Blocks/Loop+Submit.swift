extension Loop {
    /// Runs `body` on the loop's thread, in its common modes, and returns its value to the
    /// awaiting caller.
    ///
    /// The block is queued like ``perform(_:)``'s, in order with every other block, and runs
    /// when the loop next runs a common mode. The caller never waits for a block that will
    /// not run: it gets a ``SubmitError`` as soon as that is certain.
    ///
    /// - The loop refuses the block (its thread has ended, or its ``LoopThread`` is
    ///   stopping): ``SubmitError/refused``, at once.
    /// - The loop's thread ends with the block still queued: ``SubmitError/loopEnded``, as the
    ///   loop is torn down.
    /// - The awaiting task is cancelled before the block starts: ``SubmitError/cancelled``, at
    ///   once, and the block leaves the queue (or, if a drain already took it, is skipped):
    ///   it never runs. Once the block has started, cancellation does not interrupt it and
    ///   the caller gets its value.
    ///
    /// A loop that is alive but never runs a common mode again keeps the block queued: cancel
    /// the task to get out.
    ///
    /// Called from the loop's own thread (a task whose executor is the loop, or `@MainActor`
    /// code on the main loop), the block is still queued, never run inline: it runs after the
    /// blocks queued before it, while the caller is suspended and the loop goes on serving.
    ///
    /// `body` is `sending`: it may capture state that is not `Sendable`, provided the caller
    /// does not touch that state again; its result is `sending` too, so it may hand back a
    /// value made on the loop's thread, not `Sendable`, that nothing there keeps.
    ///
    /// ```swift
    /// let count = try await loop.submit { connections.count }
    /// ```
    ///
    /// See <doc:AsyncCodeAndLoops>.
    ///
    /// - Parameter body: the work, run on the loop's thread.
    /// - Returns: what `body` returned.
    /// - Throws: ``SubmitError`` when `body` never ran.
    @discardableResult
    public func submit<Value>(
        _ body: sending @escaping () -> sending Value
    ) async throws(SubmitError) -> sending Value {
        switch await submitOutcome(body) {
        case let .value(value): return value
        case .thrown: trap("Loop.submit(_:): a block that does not throw threw")
        case let .notRun(error): throw error
        }
    }

    /// Runs `body` on the loop's thread, in its common modes, and returns its value or
    /// rethrows its error; the same as the non-throwing `submit(_:)` otherwise.
    ///
    /// - Parameter body: the work, run on the loop's thread.
    /// - Returns: what `body` returned.
    /// - Throws: what `body` threw, or ``SubmitError`` when `body` never ran.
    @discardableResult
    public func submit<Value>(
        _ body: sending @escaping () throws -> sending Value
    ) async throws -> sending Value {
        switch await submitOutcome(body) {
        case let .value(value): return value
        case let .thrown(error): throw error
        case let .notRun(error): throw error
        }
    }

    /// Queues `body` and waits for its outcome, giving it up when the task is cancelled.
    private func submitOutcome<Value>(
        _ body: sending @escaping () throws -> sending Value
    ) async -> sending SubmissionOutcome<Value> {
        let submission = Submission<Value>(loop: self)
        let sent = SentBody(run: body)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in submission.begin(continuation, sent) }
        } onCancel: {
            submission.cancel()
        }
    }

    /// How many blocks are queued and not yet taken by a drain, for whatever modes (for tests
    /// that a block left the queue). Safe to call from any thread.
    package var queuedBlockCount: Int { blocks.queuedCount }
}
