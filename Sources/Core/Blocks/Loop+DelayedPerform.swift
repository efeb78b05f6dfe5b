extension Loop {
    /// Runs `block` on the loop's thread once `delay` has passed and the loop runs one of
    /// `modes` (CFRunLoop's "perform after delay in modes").
    ///
    /// A one-shot timer underneath: if none of `modes` is running when it falls due, the block
    /// waits for one of them. Safe to call from any thread.
    ///
    /// - Parameters:
    ///   - delay: how long to wait at least; zero or negative means as soon as possible.
    ///   - modes: where the block may run; ``Mode/common`` stands for the common modes. Must
    ///     not be empty (it traps with a message).
    ///   - block: the work.
    /// - Returns: the timer; `invalidate()` it to cancel the block.
    @discardableResult
    public func perform(
        after delay: Duration, in modes: ModeSet = [.common], _ block: @escaping @Sendable () -> Void
    ) -> Timer {
        trap(unless: !modes.isEmpty, "Loop.perform(after:in:_:) with no mode: the block could never run")
        // A non-negative tolerance and no interval: this cannot throw.
        let timer = try! Timer(fireAt: now + max(delay, .zero)) { _ in block() }
        for mode in modes.modes { add(timer, to: mode) }
        return timer
    }

    /// The same as the `perform(after:in:_:)` taking a ``ModeSet``, for modes already in a `Set`.
    @_disfavoredOverload
    @discardableResult
    public func perform(
        after delay: Duration, in modes: Set<Mode>, _ block: @escaping @Sendable () -> Void
    ) -> Timer {
        perform(after: delay, in: ModeSet(modes), block)
    }
}
