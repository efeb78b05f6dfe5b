import DebounceExample
import RunLoopKit
import RunLoopKitTesting
import Testing

/// A `Debouncer` on virtual time: bursts of calls over minutes, each action's instant exact.
struct DebouncerTests {
    /// Calls from the test's thread: a burst of ten, a second apart, runs the action once, `quiet`
    /// after the last call; a cancelled call never runs; a lone call runs `quiet` after itself.
    @Test(.timeLimit(.minutes(1)))
    func aBurstRunsTheActionOnceQuietAfterItsLastCall() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let ran = Recorder<Duration>()
        let debouncer = try Debouncer(on: virtual.loop, quiet: .seconds(5)) { ran.record(virtual.now - start) }

        for _ in 0..<10 { // calls at 0 s, 1 s, … 9 s
            debouncer.call()
            try virtual.advance(by: .seconds(1))
        }
        #expect(ran.all == [])
        #expect(debouncer.isPending)
        try virtual.advance(to: start + .seconds(120))
        #expect(ran.all == [.seconds(14)])
        #expect(!debouncer.isPending)

        debouncer.call() // at 2 min, cancelled 4 s later
        try virtual.advance(by: .seconds(4))
        debouncer.cancel()
        #expect(!debouncer.isPending)
        try virtual.advance(by: .seconds(60))
        #expect(ran.all == [.seconds(14)])

        debouncer.call() // at 3 min 4 s
        try virtual.advance(by: .seconds(60))
        #expect(ran.all == [.seconds(14), .seconds(189)])
    }

    /// Calls from the loop's thread, every 2 s for 100 s: `maxWait` (45 s) runs the action in the
    /// middle of the stream, twice, and `quiet` (5 s) once the stream ends; then 10 minutes of
    /// nothing.
    @Test(.timeLimit(.minutes(1)))
    func maxWaitBoundsTheDelayUnderASteadyStream() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let calls = Counter()
        struct Run: Equatable {
            let at: Duration
            let afterCalls: Int
        }
        let ran = Recorder<Run>()
        let debouncer = try Debouncer(on: virtual.loop, quiet: .seconds(5), maxWait: .seconds(45)) {
            ran.record(Run(at: virtual.now - start, afterCalls: calls.value))
        }
        // The stream: a call at 0 s, 2 s, … 100 s, made by a timer on the loop.
        let stream = try Loop.Timer(fireAt: start, interval: .seconds(2)) { timer in
            let made = calls.increment()
            debouncer.call()
            if made == 51 { timer.invalidate() }
        }
        virtual.loop.add(stream, to: .default)

        try virtual.advance(by: .seconds(600))
        // Burst 1: calls 0…44 s, maxWait at 45 s. Burst 2: calls 46…90 s, maxWait at 91 s.
        // Burst 3: calls 92…100 s, quiet at 105 s.
        #expect(
            ran.all == [
                Run(at: .seconds(45), afterCalls: 23), Run(at: .seconds(91), afterCalls: 46),
                Run(at: .seconds(105), afterCalls: 51),
            ])
        #expect(calls.value == 51)
        #expect(!debouncer.isPending)
    }
}
