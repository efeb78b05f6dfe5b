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
    /// When the run is stopped (someone calls ``stop()``) before `body` finishes, `body`'s task
    /// is cancelled and the loop goes on serving until the task ends: this returns or throws
    /// what `body` then returns or throws (a `CancellationError`, for a body that checks
    /// cancellation). Stops during that wind-down are ignored: the call does not return while
    /// the task runs, and no task started here outlives it. See <doc:AsyncCodeAndLoops>.
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
        trap(unless: isMain, "Loop.run(_:_:) with an async body runs the main loop only; \(self) is not it")
        trap(
            unless: commonModes.contains(mode),
            "Loop.run(_:_:): \(mode) is not a common mode, so the main actor cannot run in it")
        // Checked before the body's task exists, not when the loop first runs.
        trap(
            unless: isOnOwnThread,
            "Loop.run(_:_:) with an async body called off the main thread; a loop runs only on its own thread")
        let outcome = Lock<Swift.Result<Result, any Error>?>(nil)
        let task = Task { @MainActor in
            let result: Swift.Result<Result, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            self.stop()
        }
        var cancelled = false
        while true {
            // The task sets its outcome in a main-actor job this loop runs: once it is set, the
            // job (and so the task) ended inside the run that just returned.
            if let result = outcome.withLock({ $0 }) { return try result.get() }
            // Stopped before the body finished: the body's task is cancelled, not left behind,
            // and the loop goes on serving it until it ends (it may have cleanup to await).
            if run(mode) == .stopped, !cancelled, outcome.withLock({ $0 }) == nil {
                task.cancel()
                cancelled = true
            }
        }
    }
}
