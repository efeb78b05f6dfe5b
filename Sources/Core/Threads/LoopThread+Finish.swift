import Dispatch

extension LoopThread {
    /// Ends the loop once every block posted before this call has run, and returns once the
    /// thread has ended (its loop torn down), without blocking the calling thread: the async
    /// counterpart of ``stop()``, for code running on Swift concurrency's cooperative threads,
    /// which must never block.
    ///
    /// The thread is joined by a short-lived thread of its own (or, if no thread can be started,
    /// by a libdispatch worker), which resumes the caller: the awaiting task holds no thread
    /// while the loop finishes its earlier blocks. Blocks posted after this call begins are
    /// refused (``perform(waitUntilDone:_:)`` returns false), as after ``stop()`` (rule E2).
    ///
    /// Called again, or after ``stop()`` began, it waits for the same end. Cancelling the
    /// awaiting task does not make it return early: the loop is ending either way, and the
    /// thread's end is what it waits for. Must not be awaited on the loop's own thread (a task
    /// running on the loop as its executor would wait for itself); it traps there with a
    /// message.
    public func finish() async {
        trap(
            unless: Loop.currentIfCreated !== loop,
            "LoopThread.finish() awaited on its own thread; it would wait for itself")
        beginFinishing()
        await ended.wait()
    }

    /// Starts ending the loop (as ``finish()`` does) and returns at once, from any thread: the
    /// thread is joined and ``waitUntilEnded()`` returns once the loop has finished the blocks
    /// posted before this call. No effect once stopping began.
    ///
    /// For adapters that must start the end from a synchronous callback (a graceful-shutdown or
    /// cancellation handler) and await it elsewhere.
    package func beginFinishing() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finishLoop()
        // Taken here, so that `stop()` and `deinit` find nothing to join; whoever took it
        // signals `ended` once joined.
        guard let handle = thread.withLock({ $0.take() }) else { return }
        let ended = self.ended
        let join: @Sendable () -> Void = {
            handle.join()
            ended.signal()
        }
        do {
            try PThread.spawn(name: "RunLoopKit join", join).detach()
        } catch {
            // Out of threads (EAGAIN): a libdispatch worker joins instead. Never the caller's
            // thread, which may be a cooperative one.
            DispatchQueue.global().async(execute: join)
        }
    }

    /// Returns once the thread has ended (joined by ``stop()``, ``finish()`` or
    /// ``beginFinishing()``), without blocking; returns at once if it has. Does not start the
    /// end itself. Cancellation does not end the wait.
    package func waitUntilEnded() async {
        await ended.wait()
    }
}
