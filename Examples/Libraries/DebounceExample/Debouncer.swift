import RunLoopKit
import Synchronization

/// Runs an action once a burst of calls has gone quiet: each ``call()`` restarts the quiet
/// period, and the action runs once, on the loop, when `quiet` has passed with no further call.
///
/// With `maxWait`, a steady stream of calls cannot hold the action off for ever: it then runs
/// `maxWait` after the first call of the burst at the latest, and the next call begins a new
/// burst. The classic uses: a search field that queries once the user stops typing, a file
/// watcher that rebuilds once the writes stop.
///
/// ```swift
/// let save = try Debouncer(on: loop, quiet: .seconds(2), maxWait: .seconds(30)) { document.save() }
/// save.call()  // on every edit, from any thread
/// ```
///
/// Time is the loop's: a quiet period is a one-shot timer on `loop`
/// (`Loop.perform(after:in:_:)`), counted from the call on the loop's clock, so on a
/// `VirtualLoop` it follows the test's virtual time.
///
/// Thread safety: ``call()``, ``cancel()`` and ``isPending`` are safe from any thread, the
/// loop's own included (its callbacks may call them, and so may the action). The action runs on
/// the loop's thread, in `mode`, with no lock held. Once ``cancel()`` returns, no action of the
/// burst it cancelled begins. Dropping the last reference to the debouncer cancels a pending
/// action.
public final class Debouncer: Sendable {
    /// What the calls have armed; only under ``state``'s lock.
    private struct State {
        /// Counts calls: a quiet timer runs the action only if no call came after the one that
        /// armed it (a timer invalidated from another thread may already be firing).
        var calls: UInt64 = 0
        /// Counts bursts: a `maxWait` timer runs the action only for the burst that armed it.
        var bursts: UInt64 = 0
        /// A burst is open: the action will run unless cancelled.
        var isPending = false
        var quietTimer: Loop.Timer?
        var maxWaitTimer: Loop.Timer?

        /// Closes the burst: neither of its timers will run the action.
        mutating func endBurst() {
            isPending = false
            quietTimer?.invalidate()
            maxWaitTimer?.invalidate()
            quietTimer = nil
            maxWaitTimer = nil
        }
    }

    /// The loop the action runs on.
    public let loop: Loop
    /// How long the calls must stop before the action runs.
    public let quiet: Duration
    /// How long after a burst's first call the action runs at the latest; `nil`: no limit.
    public let maxWait: Duration?
    private let mode: Loop.Mode
    private let action: @Sendable () -> Void
    // The loop takes none of this lock while holding its own, and runs timers' callbacks with no
    // lock held: arming and invalidating the loop's timers under it cannot deadlock.
    private let state = Mutex(State())

    /// Makes a debouncer whose action runs on `loop`.
    ///
    /// - Parameters:
    ///   - loop: where the quiet periods are timed and the action runs.
    ///   - quiet: how long the calls must stop before the action runs; not negative.
    ///   - maxWait: the longest a burst of calls may hold the action off, from its first call;
    ///     not negative; `nil` for no limit.
    ///   - mode: the loop's mode the action runs in (`.common`: any common mode).
    ///   - action: the work, run on the loop's thread once per burst.
    /// - Throws: `ArgumentError` naming `quiet` or `maxWait` when negative.
    public init(
        on loop: Loop, quiet: Duration, maxWait: Duration? = nil, in mode: Loop.Mode = .common,
        action: @escaping @Sendable () -> Void
    ) throws(ArgumentError) {
        guard quiet >= .zero else {
            throw ArgumentError(argument: "quiet", value: "\(quiet)", reason: "a quiet period must not be negative")
        }
        if let maxWait, maxWait < .zero {
            throw ArgumentError(argument: "maxWait", value: "\(maxWait)", reason: "a wait must not be negative")
        }
        self.loop = loop
        self.quiet = quiet
        self.maxWait = maxWait
        self.mode = mode
        self.action = action
    }

    deinit {
        state.withLock { $0.endBurst() }
    }

    /// Restarts the quiet period: the action runs `quiet` from now unless another call comes
    /// first (or `maxWait` after the burst's first call, whichever is sooner). The first call
    /// after the action ran (or after ``cancel()``) begins a new burst.
    ///
    /// Safe from any thread.
    public func call() {
        state.withLock { state in
            state.calls &+= 1
            let call = state.calls
            state.quietTimer?.invalidate()
            state.quietTimer = loop.perform(after: quiet, in: [mode]) { [weak self] in
                self?.quietEnded(afterCall: call)
            }
            guard !state.isPending else { return }
            state.isPending = true
            state.bursts &+= 1
            let burst = state.bursts
            if let maxWait {
                state.maxWaitTimer = loop.perform(after: maxWait, in: [mode]) { [weak self] in
                    self?.maxWaitEnded(forBurst: burst)
                }
            }
        }
    }

    /// Drops the pending action, if any: it will not run. A later ``call()`` begins a new burst.
    ///
    /// Safe from any thread; once it returns, the cancelled action does not begin (if it had
    /// already begun on the loop's thread, it runs to its end).
    public func cancel() {
        state.withLock { $0.endBurst() }
    }

    /// Whether a call is waiting for its quiet period: the action will run unless cancelled.
    ///
    /// Safe from any thread.
    public var isPending: Bool {
        state.withLock { $0.isPending }
    }

    /// On the loop: the quiet period armed by call number `call` ended.
    private func quietEnded(afterCall call: UInt64) {
        let runs = state.withLock { state in
            guard state.isPending, state.calls == call else { return false }
            state.endBurst()
            return true
        }
        if runs { action() }
    }

    /// On the loop: the longest wait of burst number `burst` ended.
    private func maxWaitEnded(forBurst burst: UInt64) {
        let runs = state.withLock { state in
            guard state.isPending, state.bursts == burst else { return false }
            state.endBurst()
            return true
        }
        if runs { action() }
    }
}
