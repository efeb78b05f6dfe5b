import RunLoopKit
import Synchronization

/// Sends a beat to a peer every `interval` and declares the peer dead when it stops replying:
/// after `missedBeats` intervals in a row with no reply.
///
/// Beats begin at ``start()``: the first at once, then one every `interval` on a fixed grid (a
/// repeating timer on the loop, so that beats do not drift). Each beat goes out through `send`;
/// the peer's replies come back through ``received()``. At each beat after the first, the
/// interval that just ended counts as missed if no reply was received in it, and as answered
/// (resetting the count) if one was. When the count reaches `missedBeats`, `peerDied` runs, once
/// for that outage, just before that beat is sent. Beats go on while the peer is dead, so that it
/// can come back: its next reply makes it alive again, `peerRecovered` runs, and missed intervals
/// count from zero. Intervals are counted by the beats the loop sends: if the loop is held up
/// past several instants of the grid, the timer fires once for them (rule T3), and they count
/// as one interval.
///
/// ```swift
/// let heartbeat = try Heartbeat(on: loop, every: .seconds(5), missedBeats: 3) { beat in
///     connection.send(.ping(beat))
/// } peerDied: {
///     connection.close()
/// }
/// heartbeat.start()
/// // wherever pongs arrive: heartbeat.received()
/// ```
///
/// Time is the loop's: on a `VirtualLoop` the beats follow the test's virtual time.
///
/// Thread safety: ``start()``, ``received()``, ``stop()`` and ``peerIsAlive`` are safe from any
/// thread. `send`, `peerDied` and `peerRecovered` run on the loop's thread, in `mode`, with no
/// lock held. A reply counts for the interval in which the loop handles it: called on the
/// loop's thread, ``received()`` handles it at once; from another thread, it posts it to the
/// loop. Once ``stop()`` returns, no beat and no callback begins (one already running on the
/// loop's thread runs to its end). Dropping the last reference to the heartbeat stops it.
public final class Heartbeat: Sendable {
    /// Only under ``state``'s lock.
    private struct State {
        var timer: Loop.Timer?
        var isStopped = false
        /// Beats sent so far.
        var beats = 0
        /// A reply arrived since the last beat.
        var replied = false
        /// Intervals in a row without a reply.
        var missed = 0
        var peerIsAlive = true
    }

    /// The loop the beats are sent from.
    public let loop: Loop
    /// The time between beats.
    public let interval: Duration
    /// How many intervals in a row without a reply declare the peer dead.
    public let missedBeats: Int
    private let mode: Loop.Mode
    private let send: @Sendable (Int) -> Void
    private let peerDied: @Sendable () -> Void
    private let peerRecovered: @Sendable () -> Void
    // The loop takes none of this lock while holding its own, and runs callbacks with no lock
    // held: adding and invalidating the loop's timer under it cannot deadlock.
    private let state = Mutex(State())

    /// Makes a heartbeat on `loop`; ``start()`` sends the first beat.
    ///
    /// - Parameters:
    ///   - loop: where the beats are timed and every callback runs.
    ///   - interval: the time between beats; at least a nanosecond (the loop's resolution).
    ///   - missedBeats: how many intervals in a row without a reply declare the peer dead; at
    ///     least 1.
    ///   - mode: the loop's mode the beats are sent in (`.common`: any common mode).
    ///   - send: sends beat number `beat` (from 1) to the peer.
    ///   - peerDied: the peer missed `missedBeats` intervals in a row; once per outage.
    ///   - peerRecovered: a dead peer replied; it is alive again.
    /// - Throws: `ArgumentError` naming `interval` (below a nanosecond) or `missedBeats` (below 1).
    public init(
        on loop: Loop, every interval: Duration, missedBeats: Int = 3, in mode: Loop.Mode = .common,
        send: @escaping @Sendable (_ beat: Int) -> Void,
        peerDied: @escaping @Sendable () -> Void,
        peerRecovered: @escaping @Sendable () -> Void = {}
    ) throws(ArgumentError) {
        guard interval >= .nanoseconds(1) else {
            throw ArgumentError(
                argument: "interval", value: "\(interval)", reason: "an interval must be at least a nanosecond")
        }
        guard missedBeats >= 1 else {
            throw ArgumentError(
                argument: "missedBeats", value: "\(missedBeats)", reason: "at least one missed beat declares death")
        }
        self.loop = loop
        self.interval = interval
        self.missedBeats = missedBeats
        self.mode = mode
        self.send = send
        self.peerDied = peerDied
        self.peerRecovered = peerRecovered
    }

    deinit {
        stop()
    }

    /// Sends the first beat at once (on the loop's thread), then one every `interval`. Calls
    /// after the first, and calls after ``stop()``, do nothing.
    ///
    /// Safe from any thread.
    public func start() {
        state.withLock { state in
            guard state.timer == nil, !state.isStopped else { return }
            // A delay of zero: due at once, at the loop's own time (on a virtual loop, its
            // virtual time when the timer is added), and the grid of later beats anchored there.
            // It cannot throw: `init` checked the interval, and there is no tolerance.
            let timer = try! Loop.Timer(after: .zero, repeating: interval) { [weak self] _ in self?.beat() }
            state.timer = timer
            loop.add(timer, to: mode)
        }
    }

    /// Reports a reply from the peer: the current interval is answered, and a dead peer is
    /// alive again (`peerRecovered` runs).
    ///
    /// Safe from any thread: on the loop's thread it is handled at once; from another, it is
    /// posted to the loop.
    public func received() {
        if Loop.currentIfCreated === loop {
            replyArrived()
        } else {
            loop.perform(in: [mode]) { [weak self] in self?.replyArrived() }
        }
    }

    /// Sends no more beats and runs no more callbacks.
    ///
    /// Safe from any thread; a callback already running on the loop's thread runs to its end.
    public func stop() {
        state.withLock { state in
            state.isStopped = true
            state.timer?.invalidate()
            state.timer = nil
        }
    }

    /// Whether the peer is alive: it has not yet missed `missedBeats` intervals in a row, or it
    /// replied since.
    ///
    /// Safe from any thread.
    public var peerIsAlive: Bool {
        state.withLock { $0.peerIsAlive }
    }

    /// On the loop: the timer fired; counts the interval that ended, then sends the next beat.
    private func beat() {
        let beat: (number: Int, peerDied: Bool)? = state.withLock { state in
            guard !state.isStopped else { return nil }
            if state.beats > 0 {
                state.missed = state.replied ? 0 : state.missed + 1
                state.replied = false
            }
            var died = false
            if state.peerIsAlive, state.missed >= missedBeats {
                state.peerIsAlive = false
                died = true
            }
            state.beats += 1
            return (state.beats, died)
        }
        guard let beat else { return }
        if beat.peerDied { peerDied() }
        send(beat.number)
    }

    /// On the loop: a reply arrived.
    private func replyArrived() {
        let recovered = state.withLock { state in
            guard !state.isStopped else { return false }
            state.replied = true
            guard !state.peerIsAlive else { return false }
            state.peerIsAlive = true
            state.missed = 0
            return true
        }
        if recovered { peerRecovered() }
    }
}
