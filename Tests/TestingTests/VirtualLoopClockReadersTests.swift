import RunLoopKit
import RunLoopKitTesting
import TestSupport
import Testing

/// What reads a loop's time besides its timers' instants follows virtual time too: a timer made
/// with `after:`, the statistics, `debugDescription`.
@Suite("VirtualLoop: what reads the loop's time", .timeLimit(.minutes(1)))
struct VirtualLoopClockReadersTests {
    @Test("a timer made with after: counts its delay from the loop's time when first added")
    func timerAfterCountsFromVirtualNow() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        try virtual.advance(by: .seconds(100))
        let firedAt = Lock<ContinuousClock.Instant?>(nil)
        // Made now, added a virtual minute later: counted from the real time it was made, it
        // would fire 60 s early (or, as real time ran on, a little later than that).
        let timer = try Loop.Timer(after: .seconds(30)) { _ in firedAt.withLock { $0 = virtual.now } }
        try virtual.advance(by: .seconds(60))
        let added = virtual.now
        virtual.loop.add(timer, to: .default)
        try virtual.advance(by: .seconds(30) - .nanoseconds(1))
        #expect(firedAt.withLock { $0 } == nil, "not early")
        try virtual.advance(by: .nanoseconds(1))
        #expect(firedAt.withLock { $0 } == added + .seconds(30))
    }

    @Test("a timer made with after: whose instant was set before it was added keeps that instant")
    func timerAfterWithInstantSetKeepsIt() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let firedAt = Lock<ContinuousClock.Instant?>(nil)
        let timer = try Loop.Timer(after: .seconds(30)) { _ in firedAt.withLock { $0 = virtual.now } }
        timer.nextFireInstant = start + .seconds(5)
        try virtual.advance(by: .seconds(1))
        virtual.loop.add(timer, to: .default)
        try virtual.advance(by: .seconds(10))
        #expect(firedAt.withLock { $0 } == start + .seconds(5))
    }

    @Test("the statistics count virtual time: asleep for all of it, awake for none, lateness by the tolerance")
    func statisticsOnVirtualTime() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let fires = Lock<[ContinuousClock.Instant]>([])
        let exact = try Loop.Timer(fireAt: start + .seconds(30 * 60)) { _ in fires.withLock { $0.append(virtual.now) } }
        // Alone, a tolerant timer fires near the end of its tolerance (5 ms, less a timer slack).
        let tolerant = try Loop.Timer(fireAt: start + .seconds(60 * 60), tolerance: .milliseconds(5)) { _ in
            fires.withLock { $0.append(virtual.now) }
        }
        virtual.loop.add(exact, to: .default)
        virtual.loop.add(tolerant, to: .default)
        try virtual.advance(by: .seconds(61 * 60))
        let instants = fires.withLock { $0 }
        try #require(instants.count == 2)
        #expect(instants[0] == start + .seconds(30 * 60))
        let late = instants[1] - (start + .seconds(60 * 60))
        #expect(late > .milliseconds(1) && late <= .milliseconds(5))
        let statistics = virtual.loop.statistics
        // Counted up to the last wake (the tolerant timer's): the sleep since is counted when it
        // ends. Each reading is rounded to a nanosecond, hence the 1 ns.
        let asleep = statistics.timeAsleep - (instants[1] - start)
        #expect(asleep >= .nanoseconds(-1) && asleep <= .nanoseconds(1), "asleep \(statistics.timeAsleep)")
        #expect(statistics.timeAwake == .zero, "a callout takes no virtual time")
        #expect(statistics.timerLateness.under10Microseconds == 1)
        #expect(statistics.timerLateness.under10Milliseconds == 1)
        #expect(statistics.timerFires == 2)
    }

    @Test("debugDescription's \"fires in\" counts from the loop's time")
    func debugDescriptionOnVirtualTime() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let timer = try Loop.Timer(fireAt: virtual.now + .seconds(90)) { _ in }
        virtual.loop.add(timer, to: .default)
        try virtual.advance(by: .seconds(30))
        let description = virtual.loop.debugDescription
        #expect(description.contains("fires in 60 s"), "\(description)")
        timer.invalidate()
    }
}
