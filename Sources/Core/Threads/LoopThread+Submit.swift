extension LoopThread {
    /// Runs `body` on the thread's loop (common modes) and returns its value to the awaiting
    /// caller; errors and cancellation as for `Loop.submit(_:)` (see <doc:AsyncCodeAndLoops>).
    ///
    /// - Parameter body: the work, run on the loop's thread.
    /// - Returns: what `body` returned.
    /// - Throws: ``SubmitError/refused`` once ``stop()`` has begun (as ``perform(waitUntilDone:_:)``
    ///   returns false); other ``SubmitError``s as `Loop.submit` throws them.
    @discardableResult
    public func submit<Value>(
        _ body: sending @escaping () -> sending Value
    ) async throws(SubmitError) -> sending Value {
        // A submit that passes this check before stop() queues its finishing block runs before
        // it; one that loses the race is refused by the sealed queue.
        guard !stopping.load(ordering: .acquiring) else { throw .refused }
        return try await loop.submit(body)
    }

    /// Runs `body` on the thread's loop (common modes) and returns its value or rethrows its
    /// error; the same as the non-throwing `submit(_:)` otherwise.
    ///
    /// - Parameter body: the work, run on the loop's thread.
    /// - Returns: what `body` returned.
    /// - Throws: what `body` threw; ``SubmitError/refused`` once ``stop()`` has begun; other
    ///   ``SubmitError``s as `Loop.submit` throws them.
    @discardableResult
    public func submit<Value>(
        _ body: sending @escaping () throws -> sending Value
    ) async throws -> sending Value {
        guard !stopping.load(ordering: .acquiring) else { throw SubmitError.refused }
        return try await loop.submit(body)
    }
}
