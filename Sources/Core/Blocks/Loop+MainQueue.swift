internal import CRunLoopSupport

extension Loop {
    /// Binds the main loop to libdispatch's main queue, once, on the main thread: from then on
    /// `DispatchQueue.main` (and so `@MainActor` work) is served by the main loop's runs in
    /// common modes.
    func bindMainQueueIfMain() {
        guard isMain, local.mainQueuePort == nil else { return }
        let port = _dispatch_get_main_queue_handle_4CF()
        // A program whose async `main` already called dispatch_main() has no usable port.
        guard port >= 0 else { return }
        // No poke of our own: libdispatch creates this eventfd on the first block queued for
        // the main queue and writes it then, so blocks queued before the binding are already
        // announced. A poke would make the first run wake once with nothing to do.
        local.mainQueuePort = port
    }

    /// Drains the dispatch main queue once: the blocks queued before this call, not those
    /// queued while it runs. Never re-entered from a run nested in a main-queue block.
    ///
    /// - Returns: whether it drained (false inside a drain).
    func drainMainQueue() -> Bool {
        guard let port = local.mainQueuePort else { return false }
        let entered = state.withLock { state in
            guard !state.isDrainingMainQueue else { return false }
            state.isDrainingMainQueue = true
            return true
        }
        guard entered else { return false }
        // libdispatch writes this eventfd and never reads it: read it, or the loop spins.
        EventCounter(descriptor: port).drain()
        callingOutToMainQueue()
        state.withLock { $0.isDrainingMainQueue = false }
        return true
    }
}

extension Loop {
    /// A trampoline like those in Callouts.swift, here to keep the dispatch SPI in this file.
    @inline(never)
    private func callingOutToMainQueue() {
        instruments.enterCallout(.mainQueue, in: .mainQueue)
        _dispatch_main_queue_callback_4CF(nil)
        instruments.leaveCallout(to: .mainQueue)
    }
}
