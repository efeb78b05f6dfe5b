import RunLoopCore

extension BackendConformance {
    /// How a wait ends: its timeout (rounded up, never down), a poll, or the waker — from
    /// another thread, before the wait, several times at once, after the backend is gone.
    static var waitingChecks: [Check] {
        [
            Check("a wait with nothing ready never returns before its timeout", timeoutNeverEarly),
            Check("a zero or negative timeout polls: the wait returns with the buffer cleared", zeroPolls),
            Check("a wake from another thread ends a wait without timeout", wakeFromAnotherThread),
            Check("a wake posted before a wait makes that wait return, woken", wakeBeforeWait),
            Check("wakes coalesce: several wakes before a wait end that wait only", wakesCoalesce),
            Check("the waker stays safe to use after its backend is released", wakerOutlivesBackend),
        ]
    }

    /// The timeouts the never-early check waits for: below a microsecond's rounding, below a
    /// millisecond's, and just above whole milliseconds.
    private static let shortTimeouts: [Duration] = [1, 150, 1_000, 2_500].map { .microseconds($0) + .nanoseconds(1) }

    private static func timeoutNeverEarly(_ context: Context) throws {
        let subject = try Subject(context)
        // The kit's waits block signals, so none interrupts them; a few attempts all the same, as
        // a waker's stray wake would end one early. A backend that rounds down returns early
        // every time.
        let attempts = 10
        for timeout in shortTimeouts {
            var longestEarly: Duration = .zero
            var lasted = false
            for _ in 0..<attempts {
                let start = ContinuousClock.now
                try subject.waitOnce(timeout)
                let elapsed = ContinuousClock.now - start
                try expect(
                    subject.events.isEmpty, "nothing reported: nothing is registered and no wake was posted",
                    observed: "events \(subject.events.listed)")
                if elapsed >= timeout {
                    lasted = true
                    break
                }
                longestEarly = max(longestEarly, elapsed)
            }
            try expect(
                lasted, "a wait for \(timeout) with nothing ready to last at least \(timeout) (timeouts round up)",
                observed: "\(attempts) waits in a row returned early, the longest after \(longestEarly)")
        }
    }

    private static func zeroPolls(_ context: Context) throws {
        let subject = try Subject(context)
        for timeout in [Duration.zero, .zero - .seconds(1)] {
            // What was in the buffer is not the backend's to report: it is cleared first.
            var events = [ReadyEvent(token: Token(rawValue: 99), readiness: .readable)]
            do {
                try subject.backend.wait(timeout: timeout, into: &events)
            } catch {
                throw Mismatch(expected: "a poll (timeout \(timeout)) to succeed", observed: "it threw \(error)")
            }
            try expect(
                events.isEmpty, "a poll (timeout \(timeout)) with nothing registered to return an empty buffer",
                observed: "events \(events.listed)")
        }
    }

    private static func wakeFromAnotherThread(_ context: Context) throws {
        let subject = try Subject(context)
        let waker = subject.backend.waker
        let waiting = Gate()
        let helper = try Helper {
            _ = waiting.wait(for: context.deadline)
            waker.wake()
        }
        defer { helper.join(within: context.deadline) }
        waiting.open()
        // No timeout: only the wake can end it (the check's own limit catches a lost one).
        let woken = try subject.waitOut(nil)
        try expect(
            woken && subject.events.isEmpty, "the wait to return woken, with no event (the waker is not an event)",
            observed: "woken \(woken), events \(subject.events.listed)")
    }

    private static func wakeBeforeWait(_ context: Context) throws {
        let subject = try Subject(context)
        subject.backend.waker.wake()
        let woken = try subject.waitOut(context.deadline)
        try expect(
            woken && subject.events.isEmpty, "the wait after a wake to return woken, with no event",
            observed: woken ? "events \(subject.events.listed)" : "it slept its whole timeout (\(context.deadline))")
    }

    private static func wakesCoalesce(_ context: Context) throws {
        let subject = try Subject(context)
        for _ in 0..<3 { subject.backend.waker.wake() }
        let woken = try subject.waitOut(context.deadline)
        try expect(woken, "the wait after three wakes to return woken", observed: "it slept its whole timeout")
        let start = ContinuousClock.now
        let again = try subject.waitOut(.milliseconds(5))
        let elapsed = ContinuousClock.now - start
        try expect(
            !again && elapsed >= .milliseconds(5),
            "the next wait (5 ms) to sleep its timeout: the first wait consumed all three wakes",
            observed: again ? "it returned woken after \(elapsed)" : "it returned after \(elapsed)")
    }

    private static func wakerOutlivesBackend(_ context: Context) throws {
        var subject: Subject? = try Subject(context)
        let waker = subject!.backend.waker
        waker.wake()
        subject = nil
        // The loop keeps its waker after its thread exits and the backend is released.
        waker.wake()
        waker.wake()
        let helper = try Helper { waker.wake() }
        try expect(
            helper.join(within: context.deadline), "a wake after the backend's release to return",
            observed: "it was still blocked after \(context.deadline)")
        withExtendedLifetime(subject) {}
    }
}
