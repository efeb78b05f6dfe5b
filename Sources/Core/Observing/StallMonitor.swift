import Dispatch
import Synchronization

/// A watchdog that reports when a loop stays busy longer than a threshold without getting
/// back to its wait: a stalled main thread, a callout that blocks.
///
/// The loop's work is cut into *stretches*, each at most one pass long: from the start of a
/// run, or the end of a wait (a sleep or a poll), to the next wait, or the end of the run. A
/// stretch that lasts `threshold` or longer is a stall. Time asleep never is: a loop waiting
/// for work is not stuck. The monitor reports each stall twice, through `handler`:
///
/// - ``Report/Event/began`` once, when it first sees the stretch past the threshold, with the
///   ``Loop/PassPhase`` and the ``Loop/CalloutKind`` (if any) the loop was in then, and how
///   long the stretch had lasted;
/// - ``Report/Event/ended`` once, when it sees the loop in another stretch, with how long the
///   stall lasted in all.
///
/// The watchdog is a thread of its own that looks at the loop every half threshold (at most
/// every 100 µs), so a stall is reported between one and one and a half thresholds after it
/// began, and its end within half a threshold of its true end (the durations reported are the
/// loop's own times when the monitor was already watching when the stretch began). A thread
/// of its own rather than a timer on a dispatch queue: a watchdog must not depend on a thread
/// pool that the stall it watches for may be starving, and joining it on ``stop()`` is exact.
///
/// The loop is never blocked and never waits for the monitor: it publishes what it is doing
/// in two atomic words that the monitor reads (a few plain stores per pass, which a loop makes
/// whether it is watched or not; a watched loop also reads the clock after each poll). Any
/// number of monitors may watch one loop, from any thread.
///
/// `handler` runs on the monitor's thread, never on the loop's; while it runs, the monitor does
/// not look. ``stop()`` (or releasing the monitor) ends the thread and waits for it, so a
/// handler that never returns makes `stop()` wait forever.
public final class StallMonitor: Sendable {
    /// How long a stretch of work must last to be a stall.
    public let threshold: Duration

    private let watch: StallWatch
    private let thread: Lock<PThread?>

    /// Starts watching `loop` on a new thread; returns once that thread is watching.
    ///
    /// - Parameters:
    ///   - loop: the loop to watch; it need not be running yet.
    ///   - threshold: how long a stretch of work must last to be reported; positive.
    ///   - handler: called on the monitor's thread with each report.
    /// - Throws: ``ArgumentError`` naming `threshold` when it is not positive;
    ///   ``SystemError`` when the thread cannot be started.
    public init(loop: Loop, threshold: Duration, handler: @escaping @Sendable (Report) -> Void) throws {
        guard threshold > .zero else {
            throw ArgumentError(
                argument: "threshold", value: "\(threshold)", reason: "a stall threshold must be positive")
        }
        self.threshold = threshold
        let watch = StallWatch(progress: loop.instruments.progress, threshold: threshold, handler: handler)
        self.watch = watch
        // Counted before the thread starts: stretches begun from now on carry their start time.
        loop.instruments.progress.monitors.add(1, ordering: .relaxed)
        do {
            thread = Lock(try PThread.spawn(name: "stall-monitor") { watch.run() })
        } catch {
            loop.instruments.progress.monitors.subtract(1, ordering: .relaxed)
            throw error
        }
        // Watching when this returns; and the thread's one-time setup is behind it, not in
        // the middle of whatever the caller does next.
        watch.started.wait()
    }

    deinit { stop() }

    /// Stops watching: no report is made after this returns (unless called from the handler,
    /// which the monitor's thread finishes first). A stall under way gets no ``Report/Event/ended``
    /// report. Waits for the monitor's thread to exit; calling it again does nothing. Safe to
    /// call from any thread, also from the handler.
    public func stop() {
        guard let thread = thread.withLock({ $0.take() }) else { return }
        watch.stopping.store(true, ordering: .releasing)
        watch.wakeUp.signal()
        if thread.isCurrent { thread.detach() } else { thread.join() }
        watch.progress.monitors.subtract(1, ordering: .relaxed)
    }

    /// How many times the monitor has looked at the loop (for tests that must know it looked).
    package var looks: Int { watch.looks.load(ordering: .acquiring) }
}

/// The part of a ``StallMonitor`` its thread uses (the thread holds this, not the monitor, so
/// that releasing the monitor stops it).
private final class StallWatch: Sendable {
    let progress: LoopProgress
    let threshold: Duration
    let interval: DispatchTimeInterval
    let handler: @Sendable (StallMonitor.Report) -> Void
    let stopping = Atomic<Bool>(false)
    /// Signalled to end a wait between looks early, on stop.
    let wakeUp = DispatchSemaphore(value: 0)
    /// Signalled once the thread is about to make its first wait.
    let started = DispatchSemaphore(value: 0)
    let looks = Atomic<Int>(0)

    init(
        progress: LoopProgress, threshold: Duration,
        handler: @escaping @Sendable (StallMonitor.Report) -> Void
    ) {
        self.progress = progress
        self.threshold = threshold
        self.interval = .nanoseconds(Int(max(100_000, Nanoseconds.of(threshold / 2))))
        self.handler = handler
    }

    func run() {
        var tracker = StallTracker(threshold: Nanoseconds.of(threshold))
        started.signal()
        while true {
            _ = wakeUp.wait(timeout: .now() + interval)
            guard !stopping.load(ordering: .acquiring) else { return }
            let word = progress.word.load(ordering: .acquiring)
            let since = progress.since.load(ordering: .relaxed)
            let now = Nanoseconds.now()
            for report in tracker.observe(word: word, since: since, now: now) {
                guard !stopping.load(ordering: .acquiring) else { return }
                handler(report)
            }
            looks.add(1, ordering: .releasing)
        }
    }
}
