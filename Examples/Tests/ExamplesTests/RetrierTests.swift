import RetryExample
import RunLoopKit
import RunLoopKitTesting
import Testing

/// A `Retrier` on virtual time: back-offs that grow to their cap over minutes, the jitter
/// computed from the seed, each attempt's instant exact.
struct RetrierTests {
    /// What an attempt of the flaky service fails with.
    struct Unavailable: Error, Equatable {
        let attempt: Int
    }

    /// What the retrier did, with the virtual time since the start.
    enum Event: Equatable {
        case attempt(Int, at: Duration)
        case succeeded(String, at: Duration)
        case gaveUp(attempts: Int, lastError: Unavailable?, at: Duration)
    }

    /// Each attempt takes this long to fail (or succeed): the report comes from a timer.
    static let latency = Duration.milliseconds(500)

    /// The ceilings of a back-off from 1 s, doubling, capped at 60 s: 64 s is capped.
    static let ceilings: [Duration] = [1, 2, 4, 8, 16, 32, 60, 60, 60].map { .seconds($0) }

    /// A retrier on `virtual` of a service that fails every attempt before `succeedsAt` (and
    /// every one, without it), reporting `latency` after the attempt began; it records its
    /// attempts and the outcome in `events`.
    static func retrier(
        on virtual: VirtualLoop, backoff: Backoff, generator: SplitMix64 = SplitMix64(seed: 0),
        succeedsAt: Int? = nil, events: Recorder<Event>
    ) throws -> Retrier<String> {
        let start = virtual.now
        return try Retrier<String>(on: virtual.loop, maxAttempts: 10, backoff: backoff, generator: generator) {
            attempt, report in
            events.record(.attempt(attempt, at: virtual.now - start))
            virtual.loop.perform(after: latency) {
                report(attempt == succeedsAt ? .success("reply \(attempt)") : .failure(Unavailable(attempt: attempt)))
                // A second report of the same attempt is ignored.
                report(.success("late"))
            }
        } completion: { result in
            switch result {
            case let .success(value): events.record(.succeeded(value, at: virtual.now - start))
            case let .failure(failure):
                events.record(
                    .gaveUp(
                        attempts: failure.attempts, lastError: failure.lastError as? Unavailable,
                        at: virtual.now - start))
            }
        }
    }

    /// Without jitter, the back-off doubles from 1 s to its 60 s cap; ten attempts over four
    /// minutes, then the failure of the last; nothing more in the next six minutes.
    @Test(.timeLimit(.minutes(1)))
    func theBackoffDoublesToItsCapThenGivesUp() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let events = Recorder<Event>()
        let retrier = try Self.retrier(
            on: virtual, backoff: Backoff(base: .seconds(1), cap: .seconds(60), jitter: .none), events: events)
        retrier.start()
        try virtual.advance(by: .seconds(600))

        // Each attempt fails 0.5 s in; the next begins 1, 2, 4 … 32, 60, 60, 60 s later.
        let attempts: [Duration] = [0, 1.5, 4, 8.5, 17, 33.5, 66, 126.5, 187, 247.5].map { .seconds($0) }
        #expect(
            events.all
                == attempts.enumerated().map { .attempt($0.offset + 1, at: $0.element) }
                + [.gaveUp(attempts: 10, lastError: Unavailable(attempt: 10), at: .seconds(248))])
        #expect(retrier.isFinished)
    }

    /// Full jitter from a seeded generator: each delay is the one the seed gives, drawn under its
    /// ceiling (`Int64.random(in: 0...ceiling)` in nanoseconds, as `Backoff` documents).
    @Test(.timeLimit(.minutes(1)))
    func fullJitterDrawsEachDelayFromTheSeed() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let events = Recorder<Event>()
        let retrier = try Self.retrier(
            on: virtual, backoff: Backoff(base: .seconds(1), cap: .seconds(60), jitter: .full),
            generator: SplitMix64(seed: 0x5EED), events: events)
        retrier.start()
        try virtual.advance(by: .seconds(600))

        var generator = SplitMix64(seed: 0x5EED)
        var expected: [Event] = []
        var at = Duration.zero
        for (index, ceiling) in Self.ceilings.enumerated() {
            expected.append(.attempt(index + 1, at: at))
            let delay = Duration.nanoseconds(Int64.random(in: 0...ceiling.nanoseconds, using: &generator))
            at += Self.latency + delay
        }
        expected.append(.attempt(10, at: at))
        expected.append(.gaveUp(attempts: 10, lastError: Unavailable(attempt: 10), at: at + Self.latency))
        #expect(events.all == expected)
        #expect(at > .seconds(60)) // the seed's delays add up to minutes: the test covers them
    }

    /// Equal jitter (half the ceiling plus a drawn half), and a service that answers on the
    /// sixth attempt: the success is the outcome, and no attempt follows in ten minutes.
    @Test(.timeLimit(.minutes(1)))
    func equalJitterUntilTheServiceAnswers() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let events = Recorder<Event>()
        let retrier = try Self.retrier(
            on: virtual, backoff: Backoff(base: .seconds(1), cap: .seconds(60), jitter: .equal),
            generator: SplitMix64(seed: 7), succeedsAt: 6, events: events)
        retrier.start()
        try virtual.advance(by: .seconds(600))

        var generator = SplitMix64(seed: 7)
        var expected: [Event] = []
        var at = Duration.zero
        for (index, ceiling) in Self.ceilings.prefix(5).enumerated() {
            expected.append(.attempt(index + 1, at: at))
            let half = ceiling.nanoseconds / 2
            let delay = Duration.nanoseconds(
                half + Int64.random(in: 0...(ceiling.nanoseconds - half), using: &generator))
            at += Self.latency + delay
        }
        expected.append(.attempt(6, at: at))
        expected.append(.succeeded("reply 6", at: at + Self.latency))
        #expect(events.all == expected)
        #expect(retrier.isFinished)
    }

    /// Cancelled from the test's thread during the back-off before the fourth attempt: no
    /// attempt follows and no outcome is reported.
    @Test(.timeLimit(.minutes(1)))
    func cancelDuringTheBackoffEndsIt() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let events = Recorder<Event>()
        let retrier = try Self.retrier(
            on: virtual, backoff: Backoff(base: .seconds(1), cap: .seconds(60), jitter: .none), events: events)
        retrier.start()
        try virtual.advance(by: .seconds(6)) // the third attempt failed at 4.5 s; the fourth is due at 8.5 s
        retrier.cancel()
        try virtual.advance(by: .seconds(600))

        #expect(events.all == [.attempt(1, at: .zero), .attempt(2, at: .seconds(1.5)), .attempt(3, at: .seconds(4))])
        #expect(!retrier.isFinished)
    }
}
