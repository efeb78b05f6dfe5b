extension Loop {
    /// Queues `block` to run on the loop's thread while it runs a common mode.
    ///
    /// Blocks run in the order queued. A sleeping loop is woken; posting to a busy loop costs
    /// no system call. A block posted to a loop whose thread has ended, or to the loop of a
    /// ``LoopThread`` once its ``LoopThread/stop()`` queued the block that ends it, is dropped
    /// without running (`LoopThread.perform` says so by returning false). Safe to call from any
    /// thread. (A block written `{ @MainActor in … }` goes to ``perform(_:isolation:)``.)
    public func perform(_ block: consuming @escaping @Sendable () -> Void) {
        enqueue(PendingBlock(modes: .common, body: block))
    }

    /// Queues `block` to run on the loop's thread while it runs one of `modes`.
    ///
    /// ``Mode/common`` in `modes` stands for the common modes at the time the block runs.
    /// Blocks run in the order queued, each mode's blocks only while that mode runs. An empty
    /// `modes` is a programming error that traps with a message. Safe to call from any thread.
    /// Write the modes as a literal, `perform(in: [.default]) { … }`: that costs no more
    /// than ``perform(_:)`` (see ``ModeSet``).
    public func perform(in modes: ModeSet, _ block: consuming @escaping @Sendable () -> Void) {
        trap(unless: !modes.isEmpty, "Loop.perform(in:_:) with no mode: the block could never run")
        enqueue(PendingBlock(modes: BlockModes(modes), body: block))
    }

    /// Queues `block` to run on the loop's thread while it runs one of `modes`; the same as
    /// the one taking a ``ModeSet``, for modes already in a `Set`.
    @_disfavoredOverload
    public func perform(in modes: Set<Mode>, _ block: @escaping @Sendable () -> Void) {
        perform(in: ModeSet(modes), block)
    }

    /// Queues `block`; false when the loop refused it (torn down, or sealed by
    /// `sealing`'s earlier use), and then the block is released without running.
    ///
    /// - Parameter sealing: make this the last block the loop accepts (``LoopThread/stop()``).
    @discardableResult
    func enqueue(_ block: consuming PendingBlock, sealing: Bool = false) -> Bool {
        enqueueNumbered(block, sealing: sealing) != nil
    }

    /// Queues `block` as ``enqueue(_:sealing:)`` does; returns the number the queue gave it
    /// (for ``BlockQueue/remove(sequence:)``), or `nil` when the loop refused it.
    func enqueueNumbered(_ block: consuming PendingBlock, sealing: Bool = false) -> UInt64? {
        // The common case takes only the queue's lock: a poster never waits for a busy loop.
        let sequence: UInt64
        var sleepSeen: UInt64 = 0
        switch blocks.append(block, sealing: sealing, sleepSeen: &sleepSeen, in: sleep) {
        case .refused:
            return nil
        case let .queued(number):
            // The gate was read under the queue's lock: no fence needed [C2].
            sleep.wake(seen: sleepSeen)
            return number
        case let .queuedWithNewModes(modes, number):
            sequence = number
            // Queuing a block for a mode brings that mode into existence (the first time
            // only: the queue remembers). Until this runs the loop sees the block but not yet
            // the mode, which no run can tell apart from an empty mode.
            state.withLock { state in
                guard !state.isTornDown else { return }
                for mode in modes where !state.modes.contains(mode) { state.modes[mode] = ModeState() }
            }
            blocks.noteExisting(modes)
        }
        // [W3] A sleeping loop wakes for the block; a busy one costs no system call.
        sleep.wake()
        return sequence
    }
}
