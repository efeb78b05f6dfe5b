import RunLoopKit
import Testing

/// The stall monitor's decisions, fed words as a loop publishes them and instants chosen by
/// the test: what is reported, when, and with which durations.
@Suite("Stall tracker")
struct StallTrackerTests {
    static let ms: Int64 = 1_000_000

    @Test("a stamped stretch past the threshold: one began, one ended, the loop's own times")
    func stampedStall() {
        var tracker = StallTracker(threshold: 100 * Self.ms)
        let timer = StallTracker.word(stretch: 7, phase: .timers, callout: .timer, stamped: true)
        #expect(tracker.observe(word: timer, since: 1_000 * Self.ms, now: 1_050 * Self.ms).isEmpty)
        #expect(
            tracker.observe(word: timer, since: 1_000 * Self.ms, now: 1_120 * Self.ms)
                == [.init(event: .began, phase: .timers, callout: .timer, duration: .milliseconds(120))])
        // Still the same stretch, now back in the loop's own code: nothing more to say.
        let after = StallTracker.word(stretch: 7, phase: .timers, stamped: true)
        #expect(tracker.observe(word: after, since: 1_000 * Self.ms, now: 1_170 * Self.ms).isEmpty)
        // Asleep since 1,200 ms: the stall ended then, not when it was seen.
        let idle = StallTracker.word(stretch: 8, phase: nil, stamped: true)
        #expect(
            tracker.observe(word: idle, since: 1_200 * Self.ms, now: 1_220 * Self.ms)
                == [.init(event: .ended, phase: .timers, callout: .timer, duration: .milliseconds(200))])
        #expect(tracker.observe(word: idle, since: 1_200 * Self.ms, now: 5_000 * Self.ms).isEmpty)
    }

    @Test("a loop asleep, or making quick stretches, is never reported")
    func noStall() {
        var tracker = StallTracker(threshold: 100 * Self.ms)
        for look in 0..<100 {
            let now = Int64(look) * 60 * Self.ms
            let word = StallTracker.word(stretch: UInt64(look), phase: look % 2 == 0 ? nil : .blocks, stamped: true)
            #expect(tracker.observe(word: word, since: now - Self.ms, now: now).isEmpty)
        }
    }

    @Test("an unstamped stretch is timed from the look that first saw it")
    func unstamped() {
        var tracker = StallTracker(threshold: 100 * Self.ms)
        let word = StallTracker.word(stretch: 3, phase: .version1Sources, callout: .descriptorSource, stamped: false)
        #expect(tracker.observe(word: word, since: 0, now: 500 * Self.ms).isEmpty)
        #expect(
            tracker.observe(word: word, since: 0, now: 650 * Self.ms)
                == [
                    .init(
                        event: .began, phase: .version1Sources, callout: .descriptorSource, duration: .milliseconds(150)
                    )
                ])
        let next = StallTracker.word(stretch: 4, phase: .afterWaiting, stamped: false)
        #expect(
            tracker.observe(word: next, since: 0, now: 700 * Self.ms)
                == [
                    .init(
                        event: .ended, phase: .version1Sources, callout: .descriptorSource, duration: .milliseconds(200)
                    )
                ])
    }

    @Test("a stall that ends as another, seen late, begins: both are reported, in order")
    func backToBack() {
        var tracker = StallTracker(threshold: 100 * Self.ms)
        let first = StallTracker.word(stretch: 1, phase: .blocks, callout: .block, stamped: true)
        #expect(tracker.observe(word: first, since: 0, now: 150 * Self.ms).count == 1)
        let second = StallTracker.word(stretch: 2, phase: .timers, callout: .timer, stamped: true)
        #expect(
            tracker.observe(word: second, since: 200 * Self.ms, now: 420 * Self.ms) == [
                .init(event: .ended, phase: .blocks, callout: .block, duration: .milliseconds(200)),
                .init(event: .began, phase: .timers, callout: .timer, duration: .milliseconds(220)),
            ])
    }

    @Test("an end published a moment after a look saw the stall longer keeps the longer duration")
    func endNeverShorterThanBegan() {
        var tracker = StallTracker(threshold: 100 * Self.ms)
        let stalled = StallTracker.word(stretch: 1, phase: .blocks, callout: .block, stamped: true)
        #expect(tracker.observe(word: stalled, since: 0, now: 130 * Self.ms).count == 1)
        let next = StallTracker.word(stretch: 2, phase: .afterWaiting, stamped: true)
        #expect(
            tracker.observe(word: next, since: 129 * Self.ms, now: 140 * Self.ms)
                == [.init(event: .ended, phase: .blocks, callout: .block, duration: .milliseconds(130))])
    }
}
