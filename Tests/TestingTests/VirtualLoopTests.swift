import Glibc
import RunLoopKit
import RunLoopKitTesting
import Synchronization
import TestSupport
import Testing

/// The virtual loop's time: it moves only when the test moves it, stopping at each instant the
/// loop would wake at, and the loop settles before an advance returns.
@Suite("VirtualLoop: time", .timeLimit(.minutes(1)))
struct VirtualLoopTimeTests {
    /// "+Ns" for the virtual instant `instant` of `virtual`, counted from `start`.
    static func offset(_ instant: ContinuousClock.Instant, from start: ContinuousClock.Instant) -> String {
        let (seconds, attoseconds) = (instant - start).components
        return attoseconds == 0 ? "+\(seconds)s" : "+\(instant - start)"
    }

    @Test("a timer fires when time reaches its instant, not before, and at once")
    func timerFiresOnAdvance() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let record = EventRecord()
        let timer = try Loop.Timer(fireAt: start + .seconds(90)) { _ in
            record.append("fired at \(Self.offset(virtual.now, from: start))")
        }
        virtual.loop.add(timer, to: .default)
        try virtual.advance(by: .seconds(89))
        #expect(record.all.isEmpty)
        #expect(virtual.now == start + .seconds(89))
        let realBefore = ContinuousClock.now
        try virtual.advance(by: .seconds(1))
        #expect(record.all == ["fired at +90s"])
        // Ninety seconds of virtual time took far less than a real second.
        #expect(ContinuousClock.now - realBefore < .seconds(5))
    }

    @Test("an advance stops at each instant a timer is due, in order, and a repeating timer fires at each")
    func stepsThroughEachInstant() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let record = EventRecord()
        let repeating = try Loop.Timer(fireAt: start + .seconds(1), interval: .seconds(1)) { _ in
            record.append("tick \(Self.offset(virtual.now, from: start))")
        }
        let once = try Loop.Timer(fireAt: start + .milliseconds(2500)) { _ in
            record.append("once \(Self.offset(virtual.now, from: start))")
        }
        virtual.loop.add(repeating, to: .default)
        virtual.loop.add(once, to: .default)
        try virtual.advance(by: .seconds(3))
        #expect(
            record.all == ["tick +1s", "tick +2s", "once +2.5 seconds", "tick +3s"],
            "each at its own instant, in instant order")
        repeating.invalidate()
    }

    @Test("timers due at one instant fire by order, then by the order they were added")
    func sameInstantOrder() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let instant = virtual.now + .seconds(5)
        let record = EventRecord()
        for (name, order) in [("a", 2), ("b", 1), ("c", 2), ("d", 0)] {
            let timer = try Loop.Timer(fireAt: instant, order: order) { _ in record.append(name) }
            virtual.loop.add(timer, to: .default)
        }
        try virtual.advance(by: .seconds(5))
        #expect(record.all == ["d", "b", "a", "c"])
    }

    @Test("a timer with a tolerance fires by its end, or sooner with a timer that wakes the loop within it")
    func toleranceCoalescesInVirtualTime() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let fired = Lock<[String: Duration]>([:])
        let lone = try Loop.Timer(fireAt: start + .seconds(10), tolerance: .seconds(2)) { _ in
            fired.withLock { $0["lone"] = virtual.now - start }
        }
        virtual.loop.add(lone, to: .default)
        try virtual.advance(by: .seconds(11))
        #expect(fired.withLock { $0 }.isEmpty, "the loop sleeps as late as the tolerance allows")
        try virtual.advance(by: .seconds(1))
        // Core plans the wake a timer slack before the end, so the kernel's slack lands it by then.
        let lonely = try #require(fired.withLock { $0["lone"] })
        #expect(lonely > .seconds(11) && lonely <= .seconds(12), "fired at +\(lonely)")
        // Due at +20 s with 5 s of tolerance, it fires with an exact timer at +22 s.
        let tolerant = try Loop.Timer(fireAt: start + .seconds(20), tolerance: .seconds(5)) { _ in
            fired.withLock { $0["tolerant"] = virtual.now - start }
        }
        let exact = try Loop.Timer(fireAt: start + .seconds(22)) { _ in
            fired.withLock { $0["exact"] = virtual.now - start }
        }
        virtual.loop.add(tolerant, to: .default)
        virtual.loop.add(exact, to: .default)
        try virtual.advance(by: .seconds(20))
        #expect(fired.withLock { $0["tolerant"] } == .seconds(22))
        #expect(fired.withLock { $0["exact"] } == .seconds(22))
    }

    @Test("a timer a callback arms within the span fires within it, at its own instant")
    func chainedTimersFireWithinTheSpan() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let record = EventRecord()
        let loop = virtual.loop
        let first = try Loop.Timer(fireAt: start + .seconds(10)) { _ in
            record.append("first \(Self.offset(virtual.now, from: start))")
            do {
                let second = try Loop.Timer(fireAt: virtual.now + .seconds(10)) { _ in
                    record.append("second \(Self.offset(virtual.now, from: start))")
                }
                loop.add(second, to: .default)
            } catch {
                record.append("refused: \(error)")
            }
        }
        loop.add(first, to: .default)
        try virtual.advance(by: .seconds(25))
        #expect(record.all == ["first +10s", "second +20s"])
        #expect(virtual.now == start + .seconds(25))
    }

    @Test("a nested run with a timeout times out in virtual time")
    func nestedRunTimesOutInVirtualTime() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let record = EventRecord()
        let loop = virtual.loop
        loop.perform {
            let result = loop.run(Loop.Mode("nested"), timeout: .seconds(30))
            record.append("\(result) at \(Self.offset(virtual.now, from: start))")
        }
        // The block runs, and the nested run sleeps (its mode is empty: it returns at once).
        try virtual.runUntilIdle()
        let sleeper = try Loop.Timer(fireAt: start + .seconds(60)) { _ in }
        loop.add(sleeper, to: Loop.Mode("held"))
        loop.perform {
            let result = loop.run(Loop.Mode("held"), timeout: .seconds(30))
            record.append("held: \(result) at \(Self.offset(virtual.now, from: start))")
        }
        try virtual.runUntilIdle()
        #expect(record.all == ["finished at +0s"])
        try virtual.advance(by: .seconds(30))
        #expect(record.all == ["finished at +0s", "held: timedOut at +30s"])
        sleeper.invalidate()
    }

    @Test("runUntilIdle runs what is pending now, and what it posts, without moving time")
    func runUntilIdleDrainsWithoutMovingTime() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let record = EventRecord()
        let loop = virtual.loop
        let repeating = try Loop.Timer(fireAt: start, interval: .seconds(1)) { _ in record.append("tick") }
        loop.add(repeating, to: .default)
        loop.perform {
            record.append("block")
            loop.perform { record.append("posted by the block") }
        }
        try virtual.runUntilIdle()
        #expect(record.all.sorted() == ["block", "posted by the block", "tick"])
        #expect(virtual.now == start)
        try virtual.runUntilIdle()
        #expect(record.all.count == 3, "a repeating timer does not keep the loop busy")
        repeating.invalidate()
    }

    @Test("time never moves backwards: a past instant and a negative duration are refused")
    func backwardsIsRefused() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        try virtual.advance(by: .seconds(10))
        let now = virtual.now
        #expect(throws: VirtualLoopError.backwards(now: now, requested: now - .seconds(1))) {
            try virtual.advance(to: now - .seconds(1))
        }
        #expect(throws: VirtualLoopError.backwards(now: now, requested: now - .nanoseconds(1))) {
            try virtual.advance(by: .nanoseconds(-1))
        }
        #expect(virtual.now == now)
    }

    @Test("a loop that ended refuses to advance or run, with an error")
    func endedLoopThrows() throws {
        let virtual = try VirtualLoop()
        virtual.stop()
        #expect(throws: VirtualLoopError.ended) { try virtual.advance(by: .seconds(1)) }
        #expect(throws: VirtualLoopError.ended) { try virtual.runUntilIdle() }
    }

    /// Synchronous on purpose: the sleeping task runs on the loop's thread, and the test waits
    /// on its own thread, so neither waits for Swift's cooperative pool, which the stress
    /// suites may hold for minutes.
    @Test("Loop.sleep and the virtual clock's sleep end when time reaches them")
    func sleepsFollowVirtualTime() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let record = EventRecord()
        let clock = virtual.clock
        let loop = virtual.loop
        let finished = Latch()
        let failure = Ref<String>()
        let sleeper = Task(executorPreference: loop) {
            defer { finished.open() }
            do {
                try await loop.sleep(for: .seconds(5))
                record.append("loop.sleep \(Self.offset(clock.now, from: start))")
                try await clock.sleep(for: .seconds(5))
                record.append("clock.sleep \(Self.offset(clock.now, from: start))")
            } catch {
                failure.value = "\(error)"
            }
        }
        // A failure below must not leave the sleeper waiting: cancelled, a sleep throws at once.
        defer {
            if !finished.isOpen {
                sleeper.cancel()
                #expect(finished.wait(for: .seconds(60)), "the cancelled sleeper ended")
            }
        }
        // Each sleep is a timer in the loop's common modes: advance once it is armed.
        for expected in 1...2 {
            try #require(
                waitUntil(within: .seconds(60)) { loop.timerCount(in: .default) == 1 },
                "sleep \(expected) armed its timer")
            try virtual.advance(by: .seconds(5))
            try #require(waitUntil(within: .seconds(60)) { record.all.count == expected }, "sleep \(expected) ended")
        }
        #expect(finished.wait(for: .seconds(60)), "the sleeper ended")
        #expect(failure.value == nil)
        #expect(record.all == ["loop.sleep +5s", "clock.sleep +10s"])
    }
}

/// The example at the top of the article "Testing code that runs on a loop", as written there.
@Suite("VirtualLoop: the article's example", .timeLimit(.minutes(1)))
struct VirtualLoopArticleExampleTests {
    @Test func retryBacksOff() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let attempts = Mutex<[Duration]>([])
        let start = virtual.now
        // The code under test: tries again after 1, 2, 4 … seconds.
        @Sendable func attempt(_ number: Int) {
            attempts.withLock { $0.append(virtual.now - start) }
            if number < 5 { virtual.loop.perform(after: .seconds(1 << (number - 1))) { attempt(number + 1) } }
        }
        virtual.loop.perform { attempt(1) }
        try virtual.advance(by: .seconds(60)) // at once
        #expect(attempts.withLock { $0 } == [.zero, .seconds(1), .seconds(3), .seconds(7), .seconds(15)])
    }
}
