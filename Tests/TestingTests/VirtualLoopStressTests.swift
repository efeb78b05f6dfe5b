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
    @Test("a block posted from another thread has run once runUntilIdle returns after the post")
    func postRacingRunUntilIdle() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let ran = AtomicInt()
        let iterations = scaled(2_000)
        for iteration in 0..<iterations {
            let posted = Latch()
            let poster = try TestThread {
                virtual.loop.perform { ran.increment() }
                posted.open()
            }
            // Races the post: the loop may be deciding to sleep as the wake arrives.
            try virtual.runUntilIdle()
            #expect(posted.wait(), "the poster posted within the deadline")
            #expect(poster.join(), "the poster finished")
            try virtual.runUntilIdle()
            try #require(ran.value == iteration + 1, "iteration \(iteration): the block posted before runUntilIdle ran")
        }
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
        let armed = Lock(false)
        let loop = virtual.loop
        try virtual.runUntilIdle()
        virtual.holdWaitsBeforePolling {
            // Once per arming: the wait after the posted block's pass must not post again.
            guard
                armed.withLock({ armed in
                    defer { armed = false }
                    return armed
                })
            else { return }
            let poster = try? TestThread { loop.perform { ran.increment() } }
            #expect(poster?.join() == true, "the poster posted")
        }
        for iteration in 0..<scaled(200, minimum: 20) {
            armed.withLock { $0 = true }
            // A pass for an empty block, then a sleep, whose wait begins with the hook's post.
            loop.perform {}
            try virtual.runUntilIdle()
            let hookRan = !armed.withLock { $0 }
            try #require(hookRan, "iteration \(iteration): the hook ran")
            let blockRan = ran.value == iteration + 1
            // A lost wake leaves the loop asleep with the block queued, and the loop's own wake
            // for that sleep spent: a raw wake lets stop() end it, so the test fails, not hangs.
            if !blockRan { loop.backendWaker.wake() }
            try #require(blockRan, "iteration \(iteration): the block posted before the poll ran")
        }
        virtual.holdWaitsBeforePolling(nil)
    }
    #endif

    @Test("every tick of a repeating timer fires, each once, while another thread posts and advances interleave")
    func advanceWithPostsFromAnotherThread() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let ticks = AtomicInt()
        let blocks = AtomicInt()
        let start = virtual.now
        let timer = try Loop.Timer(fireAt: start + .milliseconds(1), interval: .milliseconds(1)) { _ in
            ticks.increment()
        }
        virtual.loop.add(timer, to: .default)
        let steps = scaled(5_000)
        let posts = steps
        let poster = try TestThread {
            for _ in 0..<posts { virtual.loop.perform { blocks.increment() } }
        }
        for _ in 0..<steps { try virtual.advance(by: .milliseconds(1)) }
        #expect(poster.join(), "the poster finished")
        try virtual.runUntilIdle()
        #expect(ticks.value == steps, "one tick per millisecond advanced")
        #expect(blocks.value == posts, "every block posted ran")
        #expect(virtual.now == start + .milliseconds(steps))
        timer.invalidate()
    }
}
