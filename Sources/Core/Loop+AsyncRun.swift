import Synchronization

extension Loop {
    /// Runs the main loop until `body` returns, and returns what it returned.
    ///
    /// The entry point for a synchronous `main` that wants `async` code on a run loop: call
    /// this from it. `body` runs on the main actor, which the main loop serves (through the
    /// dispatch main queue, or directly once `LoopExecutorFactory` is installed), so timers,
    /// sources and `DispatchQueue.main` blocks are served while it awaits. (An `async` `main`
    /// needs `LoopExecutorFactory` as its `DefaultExecutorFactory`: otherwise Swift's async
    /// entry point calls `dispatch_main()`, which never returns and takes the main queue away
    /// from any run loop.)
    ///
    /// Must be called on the main thread, on `Loop.main`; it traps elsewhere.
    ///
    /// - Parameters:
    ///   - mode: the common mode to run in.
    ///   - body: the async work.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func run<Result: Sendable>(
        _ mode: Mode = .default,
        _ body: @escaping @MainActor @Sendable () async throws -> Result
    ) throws -> Result {
        precondition(isMain, "Loop.run(_:_:) with an async body runs the main loop only; \(self) is not it")
        precondition(
            commonModes.contains(mode),
            "Loop.run(_:_:): \(mode) is not a common mode, so the main actor cannot run in it")
        // Checked before the body's task exists, not when the loop first runs.
        precondition(
            isOnOwnThread,
            "Loop.run(_:_:) with an async body called off the main thread; a loop runs only on its own thread")
        let outcome = Lock<Swift.Result<Result, any Error>?>(nil)
        Task { @MainActor in
            let result: Swift.Result<Result, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            self.stop()
        }
        while true {
            if let result = outcome.withLock({ $0 }) { return try result.get() }
            run(mode)
        }
    }
}
