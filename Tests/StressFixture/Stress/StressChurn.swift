import Glibc
import RunLoopKit
import TestSupport

/// Threads that add, remove and invalidate sources, timers and observers while the producers
/// run; some items invalidate themselves from their own callbacks.
///
/// Each round waits for the loop to serve what it added (within ``generousDeadline``), so a
/// lost wake or a lost item shows up as a violation; the checks that need the whole run are
/// made by ``finish()``.
final class StressChurn: @unchecked Sendable {
    // @unchecked: `records` is touched only by the one churn thread that owns this object,
    // then by the test after that thread was joined.
    let loop: Loop
    let shared: StressShared
    private var records: [(ChurnRecord, expected: Int, atMost: Bool)] = []
    private(set) var rounds = 0

    init(loop: Loop, shared: StressShared) {
        self.loop = loop
        self.shared = shared
    }

    private var violations: Violations { shared.violations }

    /// Churns sources and observers until the producers are done.
    func churnSourcesAndObservers() {
        while !shared.isWindingDown {
            guard selfInvalidatingSource(), removedSource(), observers(), descriptorSources() else { return }
            rounds += 1
            shared.watchdog.beat()
        }
    }

    /// Churns timers until the producers are done.
    func churnTimers() {
        while !shared.isWindingDown {
            guard oneShotTimers(), selfInvalidatingRepeatingTimer(), rearmedTimer() else { return }
            rounds += 1
            shared.watchdog.beat()
        }
    }

    /// Checks what only the whole run can tell; call after the churn thread was joined and the
    /// loop ran a block posted after that.
    func finish() {
        for (record, expected, atMost) in records { record.expectCalls(expected, atMost: atMost) }
    }

    // MARK: - Sources

    /// A version-0 source that invalidates itself in its perform: performed exactly once.
    private func selfInvalidatingSource() -> Bool {
        let record = ChurnRecord("a version-0 source invalidated in its own perform", violations: violations)
        let ref = Ref<Loop.Source>()
        let source = Loop.Source {
            // Invalidated before the call is counted: the churn thread lets go of `ref` once
            // it sees the call.
            ref.value?.invalidate()
            record.call()
        }
        ref.value = source
        loop.add(source, to: .default)
        source.signal()
        defer { ref.value = nil }
        records.append((record, 1, false))
        return awaitCall(record)
    }

    /// A version-0 source signalled, then removed and invalidated from this thread.
    private func removedSource() -> Bool {
        let record = ChurnRecord(
            "a version-0 source removed and invalidated from another thread", violations: violations)
        let source = Loop.Source { record.call() }
        loop.add(source, to: .default)
        source.signal()
        loop.remove(source, from: .default)
        source.invalidate()
        records.append((record, 1, true))
        return markGone([record])
    }

    /// Descriptor sources on fresh pipes: one drains and invalidates itself; one is removed and
    /// invalidated from this thread and its pipe closed right away (the number is reused by the
    /// next round's pipe).
    private func descriptorSources() -> Bool {
        guard let selfClosing = try? Pipe(), let abandoned = try? Pipe() else {
            violations.record("could not create a pipe")
            return false
        }
        let record = ChurnRecord("a descriptor source invalidated in its own handler", violations: violations)
        let ref = Ref<Loop.Source>()
        guard
            let source = try? Loop.Source(
                fileDescriptor: selfClosing.readEnd,
                handler: { _ in
                    selfClosing.drain()
                    ref.value?.invalidate()
                    record.call()
                })
        else {
            violations.record("a descriptor source on a fresh pipe was refused")
            return false
        }
        ref.value = source
        loop.add(source, to: .default)
        selfClosing.fill()
        records.append((record, 1, false))
        let served = awaitCall(record)
        ref.value = nil
        selfClosing.close()

        let removed = ChurnRecord(
            "a descriptor source removed and invalidated from another thread", violations: violations)
        // Its handler never reads: once the pipe is closed its number may name the next
        // round's pipe, whose data must not be stolen by a call that came too late.
        guard let other = try? Loop.Source(fileDescriptor: abandoned.readEnd, handler: { _ in removed.call() }) else {
            violations.record("a descriptor source on a fresh pipe was refused")
            return false
        }
        loop.add(other, to: .default)
        abandoned.fill()
        loop.remove(other, from: .default)
        other.invalidate()
        // Invalidated before closing, as the API asks: the descriptor may be closed at once.
        abandoned.close()
        records.append((removed, .max, true))
        return served && markGone([removed])
    }

    // MARK: - Observers

    /// An observer that invalidates itself on its third call; one invalidated and one removed
    /// from this thread.
    private func observers() -> Bool {
        let activities: Loop.Activity = [.beforeSources, .beforeWaiting, .afterWaiting]
        let selfInvalidating = ChurnRecord("an observer invalidated in its own third call", violations: violations)
        loop.add(
            Loop.Observer(activities: activities) { observer, _ in
                if selfInvalidating.call() == 3 { observer.invalidate() }
            }, to: .default)
        records.append((selfInvalidating, 3, true))

        let invalidated = ChurnRecord("an observer invalidated from another thread", violations: violations)
        let first = Loop.Observer(activities: activities) { _, _ in invalidated.call() }
        let removed = ChurnRecord("an observer removed from another thread", violations: violations)
        let second = Loop.Observer(activities: activities) { _, _ in removed.call() }
        loop.add(first, to: .default)
        loop.add(second, to: .default)
        // Let a pass or two call them before they go.
        loop.wakeUp()
        first.invalidate()
        loop.remove(second, from: .default)
        records.append((invalidated, .max, true))
        records.append((removed, .max, true))
        let gone = markGone([invalidated, removed])
        second.invalidate()
        return gone
    }

    // MARK: - Timers

    /// One-shot timers due within 2 ms: each fires once and never early; one invalidated from
    /// this thread before it is due never fires after that.
    private func oneShotTimers() -> Bool {
        var fired: [ChurnRecord] = []
        for index in 0..<4 {
            let record = ChurnRecord("a one-shot timer", violations: violations)
            let instant = ContinuousClock.now + .microseconds(500 * index)
            guard
                let timer = try? Loop.Timer(
                    fireAt: instant,
                    handler: { [violations] _ in
                        if ContinuousClock.now < instant { violations.record("a one-shot timer fired early") }
                        record.call()
                    })
            else {
                violations.record("a one-shot timer was refused")
                return false
            }
            loop.add(timer, to: .default)
            fired.append(record)
            records.append((record, 1, false))
        }
        let cancelled = ChurnRecord("a one-shot timer invalidated from another thread", violations: violations)
        guard let timer = try? Loop.Timer(after: .milliseconds(2), handler: { _ in cancelled.call() }) else {
            violations.record("a one-shot timer was refused")
            return false
        }
        loop.add(timer, to: .default)
        timer.invalidate()
        // At most once: a churn thread descheduled for 2 ms lets it fire before the invalidate.
        records.append((cancelled, 1, true))
        return fired.allSatisfy(awaitCall) && markGone([cancelled])
    }

    /// A repeating timer that invalidates itself on its third fire: exactly three fires.
    private func selfInvalidatingRepeatingTimer() -> Bool {
        let record = ChurnRecord("a repeating timer invalidated in its third fire", violations: violations)
        let done = Latch()
        guard
            let timer = try? Loop.Timer(
                after: .zero, repeating: .microseconds(500),
                handler: { timer in
                    if record.call() == 3 {
                        timer.invalidate()
                        done.open()
                    }
                })
        else {
            violations.record("a repeating timer was refused")
            return false
        }
        loop.add(timer, to: .default)
        records.append((record, 3, false))
        return awaitLatch(done, "a repeating timer did not fire three times")
    }

    /// A timer due in an hour, re-armed from this thread to fire in a millisecond: it fires,
    /// not before the new instant.
    private func rearmedTimer() -> Bool {
        let record = ChurnRecord("a timer re-armed from another thread", violations: violations)
        let instant = Lock<ContinuousClock.Instant>(.now + .seconds(3600))
        guard
            let timer = try? Loop.Timer(
                after: .seconds(3600),
                handler: { [violations] _ in
                    if ContinuousClock.now < instant.withLock({ $0 }) {
                        violations.record("a re-armed timer fired before its new instant")
                    }
                    record.call()
                })
        else {
            violations.record("a re-armed timer was refused")
            return false
        }
        loop.add(timer, to: .default)
        let soon = ContinuousClock.now + .milliseconds(1)
        instant.withLock { $0 = soon }
        timer.nextFireInstant = soon
        records.append((record, 1, false))
        return awaitCall(record)
    }

    // MARK: - Waiting for the loop

    private func awaitCall(_ record: ChurnRecord) -> Bool {
        awaitLatch(record.called, "\(record.what) was never called")
    }

    /// Posts a block that marks `gone` on the loop's thread and waits for it to run.
    private func markGone(_ gone: [ChurnRecord]) -> Bool {
        let ran = Latch()
        loop.perform {
            for record in gone { record.markGone() }
            ran.open()
        }
        return awaitLatch(ran, "a block posted by a churn thread never ran")
    }

    private func awaitLatch(_ latch: Latch, _ failure: String) -> Bool {
        guard latch.wait(for: generousDeadline) else {
            violations.record("\(failure) within \(generousDeadline)")
            return false
        }
        return true
    }
}
