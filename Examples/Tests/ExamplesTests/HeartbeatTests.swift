import HeartbeatExample
import RunLoopKit
import RunLoopKitTesting
import Testing

/// A `Heartbeat` on virtual time: ten minutes of beats every 5 s, a peer that goes silent and
/// comes back, each beat's and each verdict's instant exact.
struct HeartbeatTests {
    /// What the heartbeat did, with the virtual time since the start.
    enum Event: Equatable {
        case beat(Int, at: Duration)
        case died(at: Duration)
        case recovered(at: Duration)
    }

    /// A heartbeat every 5 s on `virtual`, dead after 3 missed beats, recording in `events`;
    /// `replies` says, from a beat's time, whether the peer answers it (100 ms later).
    static func heartbeat(
        on virtual: VirtualLoop, events: Recorder<Event>, replies: @escaping @Sendable (Duration) -> Bool
    ) throws -> Heartbeat {
        let start = virtual.now
        let peer = Later<Heartbeat>()
        let heartbeat = try Heartbeat(on: virtual.loop, every: .seconds(5), missedBeats: 3) { beat in
            let now = virtual.now - start
            events.record(.beat(beat, at: now))
            // The peer answers the beats `replies` says it does, 100 ms later.
            if replies(now) { virtual.loop.perform(after: .milliseconds(100)) { peer.value?.received() } }
        } peerDied: {
            events.record(.died(at: virtual.now - start))
        } peerRecovered: {
            events.record(.recovered(at: virtual.now - start))
        }
        peer.value = heartbeat
        return heartbeat
    }

    /// Ten minutes of beats; the peer ignores those sent from 3 min to 5 min: the third beat
    /// without a reply since, at 3 min 15 s, declares it dead (once, though it stays silent for
    /// two minutes), and its reply to the 5 min beat makes it alive again.
    @Test(.timeLimit(.minutes(1)))
    func aPeerSilentForTwoMinutesDiesOnceAndRecovers() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let events = Recorder<Event>()
        let heartbeat = try Self.heartbeat(on: virtual, events: events) { beat in
            !(.seconds(180) ..< .seconds(300)).contains(beat)
        }
        heartbeat.start()
        try virtual.advance(by: .seconds(600))

        var expected: [Event] = []
        for number in 1...121 { // a beat at 0 s, 5 s, … 600 s
            let at = Duration.seconds(5 * (number - 1))
            // Replied at 175.1 s; no reply in the intervals ending at 185, 190 and 195 s.
            if at == .seconds(195) { expected.append(.died(at: at)) }
            expected.append(.beat(number, at: at))
            if at == .seconds(300) { expected.append(.recovered(at: .seconds(300) + .milliseconds(100))) }
        }
        #expect(events.all == expected)
        #expect(heartbeat.peerIsAlive)
    }

    /// A peer that never replies dies 15 s in (three silent intervals) and stays dead, once; a
    /// reply reported from the test's thread at 60 s revives it, until its third silent interval
    /// again, at 80 s; `stop()` at 100 s ends the beats for the remaining eight minutes.
    @Test(.timeLimit(.minutes(1)))
    func aSilentPeerDiesAReplyFromAnotherThreadRevivesItAndStopEndsTheBeats() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let start = virtual.now
        let events = Recorder<Event>()
        let heartbeat = try Self.heartbeat(on: virtual, events: events) { _ in false }
        heartbeat.start()

        try virtual.advance(by: .seconds(14))
        #expect(heartbeat.peerIsAlive)
        try virtual.advance(by: .seconds(1)) // the third interval without a reply ends
        #expect(!heartbeat.peerIsAlive)

        try virtual.advance(to: start + .seconds(60))
        heartbeat.received() // from this thread: posted to the loop
        try virtual.runUntilIdle()
        #expect(heartbeat.peerIsAlive)

        try virtual.advance(to: start + .seconds(100))
        heartbeat.stop()
        try virtual.advance(by: .seconds(500))

        var expected: [Event] = []
        for number in 1...21 { // a beat at 0 s, 5 s, … 100 s
            let at = Duration.seconds(5 * (number - 1))
            if at == .seconds(15) || at == .seconds(80) { expected.append(.died(at: at)) }
            expected.append(.beat(number, at: at))
            if at == .seconds(60) { expected.append(.recovered(at: at)) }
        }
        #expect(events.all == expected)
        #expect(!heartbeat.peerIsAlive)
    }
}
