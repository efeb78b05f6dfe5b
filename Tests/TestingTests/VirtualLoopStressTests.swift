import Dispatch
import Glibc
import RunLoopKit
import RunLoopKitTesting
import TestSupport
import Testing

/// The virtual loop's cross-thread windows: a settled loop is one that nothing posted before
/// the call can still wake. Each iteration races a post from another thread with the loop's
/// decision to sleep for real.
@Suite("VirtualLoop: stress", .timeLimit(.minutes(2)))
struct VirtualLoopStressTests {
    @Test("a block and signals posted from other threads are handled once runUntilIdle returns after the posts")
    func postsRacingRunUntilIdle() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let loop = virtual.loop
        let ran = AtomicInt()
        let handled = AtomicInt()
        let source = Loop.Source { handled.increment() }
        loop.add(source, to: .default)
        let iterations = scaled(2_000, minimum: 200)
        // Two posters that live through the test, released together at each iteration: a
        // thread's start would otherwise take longer than the loop's decision to sleep.
        let go = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let posted = DispatchSemaphore(value: 0)
        let blockPoster = try TestThread {
            for _ in 0..<iterations {
                go.0.wait()
                loop.perform { ran.increment() }
                posted.signal()
            }
        }
        let signaller = try TestThread {
            for _ in 0..<iterations {
                go.1.wait()
                // Twice: the second finds the source signalled and leaves the wake to the first.
                source.signal()
                source.signal()
                posted.signal()
            }
        }
        for iteration in 0..<iterations {
            let handledBefore = handled.value
            go.0.signal()
            go.1.signal()
            // Races the posts: the loop may be deciding to sleep as they arrive.
            try virtual.runUntilIdle()
            let bothPosted =
                posted.wait(timeout: .now() + 30) == .success && posted.wait(timeout: .now() + 30) == .success
            try #require(bothPosted, "iteration \(iteration): the posters posted within 30 s")
            try virtual.runUntilIdle()
            try #require(ran.value == iteration + 1, "iteration \(iteration): the block posted before runUntilIdle ran")
            // Two signals: one handling when the second found the first pending, two when the
            // loop handled the first in between; none left pending either way.
            let handlings = handled.value - handledBefore
            try #require(
                handlings == 1 || handlings == 2,
                "iteration \(iteration): the signals before runUntilIdle were handled (\(handlings) handlings)")
        }
        #expect(blockPoster.join() && signaller.join(), "the posters finished")
        source.invalidate()
    }

    #if DEBUG
    /// The narrowest window, held open: a block posted, and its wake done, after the loop
    /// decided to sleep and before its backend's poll, which consumes the wake. The loop must
    /// look at its queues again rather than sleep.
    @Test("a wake done between the loop's decision to sleep and its backend's poll is not lost")
    func wakeBeforeThePollIsNotLost() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let ran = AtomicInt()
        let arming = Arming()
        let loop = virtual.loop
        try virtual.runUntilIdle()
        virtual.holdWaitsBeforePolling {
            // Once per arming: the wait after the posted block's pass must not post again.
            if arming.take() {
                let poster = try? TestThread { loop.perform { ran.increment() } }
                #expect(poster?.join() == true, "the poster posted")
            }
        }
        for iteration in 0..<scaled(200, minimum: 20) {
            arming.arm()
            // A pass for an empty block, then a sleep, whose wait begins with the hook's post.
            loop.perform {}
            try virtual.runUntilIdle()
            try #require(arming.wasTaken, "iteration \(iteration): the hook ran")
            let blockRan = ran.value == iteration + 1
            // A lost wake leaves the loop asleep with the block queued, and the loop's own wake
            // for that sleep spent: a raw wake lets stop() end it, so the test fails, not hangs.
            if !blockRan { loop.backendWaker.wake() }
            try #require(blockRan, "iteration \(iteration): the block posted before the poll ran")
        }
        virtual.holdWaitsBeforePolling(nil)
    }

    /// The window of a move of time: the advance saw the loop asleep, then another thread's block
    /// woke it, and the loop read the time for its next wait. Time must not move under it then:
    /// the wait's deadline, the time read plus its timeout, would land late.
    @Test("time does not move under a loop a post woke after the advance saw it asleep")
    func timeDoesNotMoveUnderAnAwakeLoop() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let loop = virtual.loop
        let start = virtual.now
        let firedAt = Lock<Duration?>(nil)
        let timer = try Loop.Timer(fireAt: start + .seconds(10)) { _ in firedAt.withLock { $0 = virtual.now - start } }
        loop.add(timer, to: .default)
        try virtual.runUntilIdle()
        let (loopArming, advanceArming) = (Arming(armed: true), Arming(armed: true))
        let loopInWindow = Latch()
        // The block's wake sends the loop's first wait back to Core, which reads the time again
        // for a second: the one that sleeps, whose window this holds.
        let waitsSincePost = AtomicInt()
        virtual.holdWaitsBeforePolling {
            if advanceArming.wasTaken, waitsSincePost.increment() == 2, loopArming.take() {
                loopInWindow.open()
                // Held until time moves under it (the bug), or long enough that it would have.
                _ = waitUntil(within: .milliseconds(300)) { virtual.now != start }
            }
        }
        virtual.holdAdvancesBeforeMovingTime {
            if advanceArming.take() {
                loop.perform {}
                #expect(loopInWindow.wait(for: .seconds(30)), "the block woke the loop into its next wait")
            }
        }
        try virtual.advance(by: .seconds(5))
        try virtual.advance(by: .seconds(5))
        #expect(advanceArming.wasTaken && loopArming.wasTaken, "both hooks held their windows")
        #expect(firedAt.withLock { $0 } == .seconds(10), "the timer fired at its instant")
        virtual.holdWaitsBeforePolling(nil)
        virtual.holdAdvancesBeforeMovingTime(nil)
    }

    /// A second signal finds its source signalled and returns without waking the loop, leaving
    /// the wake to the first signaller, held here before it claims the loop's sleep: the loop is
    /// asleep with no wake begun, yet not idle.
    @Test("a signal coalesced into one whose wake is still on its way is handled before runUntilIdle returns")
    func coalescedSignalIsNotTakenForIdle() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let loop = virtual.loop
        let handled = AtomicInt()
        let source = Loop.Source { handled.increment() }
        loop.add(source, to: .default)
        try virtual.runUntilIdle()
        let firstHeld = Latch()
        let arming = Arming(armed: true)
        loop.holdWakesAfterSeeingSleep {
            if arming.take() {
                firstHeld.open()
                // Held long enough for runUntilIdle to have returned if it took the loop for idle.
                _ = waitUntil(within: .milliseconds(300)) { false }
            }
        }
        let first = try TestThread { source.signal() }
        #expect(firstHeld.wait(for: .seconds(30)), "the first signaller reached the wake")
        source.signal()
        try virtual.runUntilIdle()
        #expect(handled.value == 1, "the signal was handled before runUntilIdle returned")
        #expect(first.join(), "the first signaller finished")
        loop.holdWakesAfterSeeingSleep(nil)
        source.invalidate()
    }
    #endif

    @Test(
        "every tick of a repeating timer fires once at its own instant while advances that fall between ticks race posts"
    )
    func advanceWithPostsFromAnotherThread() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let blocks = AtomicInt()
        let start = virtual.now
        // The instants the ticks saw, on the loop's thread; read once the loop settled.
        let ticks = Lock<[Duration]>([])
        let timer = try Loop.Timer(fireAt: start + .milliseconds(1), interval: .milliseconds(1)) { _ in
            ticks.withLock { $0.append(virtual.now - start) }
        }
        virtual.loop.add(timer, to: .default)
        // 0.7 ms steps: most end between two ticks, where time moves with no wake, while the
        // poster's blocks keep waking the loop.
        let steps = scaled(5_000, minimum: 500)
        // One block per step, released as the step begins: it wakes the loop while the advance
        // decides where time goes, so a time moved under an awake loop would shift its deadline.
        let go = DispatchSemaphore(value: 0)
        let poster = try TestThread {
            for _ in 0..<steps {
                go.wait()
                virtual.loop.perform { blocks.increment() }
            }
        }
        for _ in 0..<steps {
            go.signal()
            try virtual.advance(by: .microseconds(700))
        }
        #expect(poster.join(), "the poster finished")
        try virtual.runUntilIdle()
        let advanced = Duration.microseconds(700) * steps
        let expected = (1...Int(advanced / .milliseconds(1))).map { Duration.milliseconds($0) }
        let seen = ticks.withLock { $0 }
        #expect(seen.count == expected.count, "one tick per whole millisecond advanced")
        #expect(seen == expected, "each tick at its own instant, none late")
        #expect(blocks.value == steps, "every block posted ran")
        #expect(virtual.now == start + advanced)
        timer.invalidate()
    }
}

/// A hook's one shot: armed by the test, taken by the first call of the hook that finds it
/// armed, so that the hook acts once per arming; the test then checks that it was taken.
final class Arming: Sendable {
    private let armed: Lock<Bool>

    init(armed: Bool = false) { self.armed = Lock(armed) }

    func arm() { armed.withLock { $0 = true } }

    /// Whether this call takes the arming (and disarms it).
    func take() -> Bool {
        armed.withLock { armed in
            defer { armed = false }
            return armed
        }
    }

    /// Whether the arming was taken since it was last armed.
    var wasTaken: Bool { !armed.withLock { $0 } }
}
