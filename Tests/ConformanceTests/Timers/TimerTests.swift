import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › Timers, T1–T13;
/// C1: Clock and rounding.
@Suite("Timers")
struct TimerTests {
    @Test("a one-shot timer fires once, is invalidated before its callout, and never early", arguments: backends)
    func oneShot(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            // The instant the timer is armed with once added: 2 ms from now, or the moment it
            // was added if that came later (a thread descheduled that long: a past instant
            // means now).
            let armed = Lock<ContinuousClock.Instant?>(nil)
            let timer = try Loop.Timer(fireAt: loop.now + .milliseconds(2)) { timer in
                let due = armed.withLock { $0 } ?? loop.now
                trace(
                    "fired valid=\(timer.isValid) early=\(loop.now < due) reads-served=\(timer.nextFireInstant == due)"
                )
            }
            loop.add(timer, to: .default)
            armed.withLock { $0 = timer.nextFireInstant }
            trace("\(loop.run(timeout: generousDeadline))")
            trace("valid=\(timer.isValid) in-mode=\(loop.contains(timer, in: .default))")
        }
        #expect(
            trace.all == ["fired valid=false early=false reads-served=true", "finished", "valid=false in-mode=false"])
    }

    @Test("a fire instant in the past is clamped to now when added, re-anchoring the grid", arguments: backends)
    func pastInstantClamped(_ backend: BackendKind) async throws {
        let (anchoredAfterAdd, served) = try await onLoopThread(backend) { loop in
            let served = Lock<[ContinuousClock.Instant]>([])
            let timer = try Loop.Timer(fireAt: loop.now - .seconds(10), interval: .milliseconds(1)) { timer in
                let count = served.withLock {
                    $0.append(timer.nextFireInstant); return $0.count
                }
                if count == 3 { timer.invalidate() }
            }
            let beforeAdd = loop.now
            loop.add(timer, to: .default)
            let anchor = timer.nextFireInstant
            loop.run(timeout: generousDeadline)
            return (anchor >= beforeAdd, served.withLock { $0.map { $0 - anchor } })
        }
        #expect(anchoredAfterAdd)
        // Every served instant lies on the grid anchored at the moment of adding.
        #expect(served.first == .zero)
        #expect(served.allSatisfy { $0.nanosecondsRoundedUp % 1_000_000 == 0 })
    }

    @Test(
        "a repeating timer that missed instants fires once, then moves to the next grid instant in the future",
        .realTimeOnly(.spinningTakesTime), arguments: backends)
    func missedFiresSkipped(_ backend: BackendKind) async throws {
        let (fires, next, returned, anchor) = try await onLoopThread(backend) { loop in
            let interval = Duration.milliseconds(2)
            let count = Atomic<Int>(0)
            let observed = Lock<(next: ContinuousClock.Instant, returned: ContinuousClock.Instant)?>(nil)
            let anchorRef = Lock<ContinuousClock.Instant?>(nil)
            let timer = try Loop.Timer(after: .milliseconds(1), repeating: interval) { timer in
                let n = count.add(1, ordering: .relaxed).newValue
                if n == 1 {
                    anchorRef.withLock { $0 = timer.nextFireInstant }
                    // Busy the loop's thread across several instants.
                    let busyUntil = ContinuousClock.now + .milliseconds(15)
                    while ContinuousClock.now < busyUntil {}
                    let returned = ContinuousClock.now
                    loop.perform { observed.withLock { $0 = (timer.nextFireInstant, returned) } }
                } else {
                    timer.invalidate()
                }
            }
            loop.add(timer, to: .default)
            loop.run(timeout: generousDeadline)
            let seen = observed.withLock { $0! }
            return (count.load(ordering: .relaxed), seen.next, seen.returned, anchorRef.withLock { $0! })
        }
        #expect(fires == 2)
        // On the original grid, after the callback returned: the missed instants were skipped.
        #expect((next - anchor).nanosecondsRoundedUp % 2_000_000 == 0)
        #expect(next > returned)
        #expect(next - anchor >= .milliseconds(16))
    }

    @Test("due timers fire in instant order, ties by order, then by when they were added", arguments: backends)
    func fireOrder(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let specs: [(String, Duration, Int)] = [
                ("later", .microseconds(10), 0),
                ("first-added order 0", .zero, 0),
                ("order -1", .zero, -1),
                ("second-added order 0", .zero, 0),
                ("earliest", .zero - .microseconds(10), 9),
            ]
            // Every instant must still be ahead when its timer is added (an instant already
            // past is clamped to the moment of adding, which would order by adding): a thread
            // descheduled for that long makes the test start again, never guess.
            var base: ContinuousClock.Instant
            var timers: [Loop.Timer]
            repeat {
                base = ContinuousClock.now + .milliseconds(50)
                timers = try specs.map { name, offset, order in
                    try Loop.Timer(fireAt: base + offset, order: order) { _ in trace(name) }
                }
                for timer in timers { loop.add(timer, to: .default) }
                guard ContinuousClock.now < base - .microseconds(10) else {
                    for timer in timers { timer.invalidate() }
                    continue
                }
                break
            } while true
            // Busy past every instant so that all are due in the same pass.
            let busyUntil = base + .milliseconds(1)
            loop.perform { while ContinuousClock.now < busyUntil { usleep(500) } }
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["earliest", "order -1", "first-added order 0", "second-added order 0", "later"])
    }

    @Test("a timer falling due while timer callbacks run fires in a later pass", arguments: backends)
    func dueDuringCallbacksWaits(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.record([.afterWaiting], into: trace)
            let second = try Loop.Timer(fireAt: loop.now + .seconds(3600)) { _ in trace("second") }
            loop.add(second, to: .default)
            let first = try Loop.Timer(after: .zero) { _ in
                trace("first")
                second.nextFireInstant = loop.now
                let busyUntil = ContinuousClock.now + .milliseconds(1)
                while ContinuousClock.now < busyUntil {}
            }
            loop.add(first, to: .default)
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["afterWaiting", "first", "afterWaiting", "second"])
    }

    @Test("a next instant set inside the callback wins over the automatic advance when later", arguments: backends)
    func setInsideCallbackLater(_ backend: BackendKind) async throws {
        let instants = try await servedInstants(backend, repeating: .milliseconds(1), setLaterBy: .milliseconds(100))
        #expect(zip(instants.dropFirst(), instants).map { $0 - $1 } == [.milliseconds(100)])
    }

    /// T6: a past instant set inside the callback means now, like everywhere else (before,
    /// it left the hour-long advance in place and the run timed out).
    @Test(
        "a past instant, or the instant being served, set inside the callback fires the timer again in the next pass",
        arguments: backends, ["a past instant", "the instant being served"])
    func setInsideCallbackToPast(_ backend: BackendKind, _ instant: String) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let passes = Atomic<Int>(0)
            loop.add(
                Loop.Observer(activities: .beforeTimers) { _, _ in passes.add(1, ordering: .relaxed) }, to: .default)
            let fires = Atomic<Int>(0)
            let timer = try Loop.Timer(after: .zero, repeating: .seconds(3600)) { timer in
                let fire = fires.add(1, ordering: .relaxed).newValue
                trace("fire \(fire) in pass \(passes.load(ordering: .relaxed))")
                if fire == 1 {
                    timer.nextFireInstant = instant == "a past instant" ? loop.now - .seconds(1) : timer.nextFireInstant
                } else {
                    timer.invalidate()
                }
            }
            loop.add(timer, to: .default)
            trace("\(loop.run(timeout: generousDeadline))")
        }
        #expect(trace.all == ["fire 1 in pass 1", "fire 2 in pass 2", "finished"])
    }

    @Test("setting the instant of an invalidated timer has no effect; it keeps its last instant", arguments: backends)
    func setOnInvalidated(_ backend: BackendKind) async throws {
        let kept = try await onLoopThread(backend) { loop in
            let timer = try Loop.Timer(after: .seconds(60)) { _ in }
            loop.add(timer, to: .default)
            let last = timer.nextFireInstant
            timer.invalidate()
            timer.nextFireInstant = loop.now
            return timer.nextFireInstant == last && !timer.isValid
        }
        #expect(kept)
    }

    @Test(
        "re-arming a timer from another thread wakes the sleeping loop", .realTimeOnly(.otherThreadWhileAsleep),
        arguments: backends)
    func rearmFromAnotherThread(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in trace("fired") }
            loop.add(timer, to: .default)
            onceAsleep(loop) {
                timer.nextFireInstant = loop.now
            }
        }
        #expect(result == .finished)
        #expect(trace.all == ["fired"])
    }

    @Test(
        "adding a sooner timer from another thread wakes the sleeping loop", .realTimeOnly(.otherThreadWhileAsleep),
        arguments: backends)
    func addFromAnotherThread(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            let far = try Loop.Timer(after: .seconds(3600)) { _ in }
            loop.add(far, to: .default)
            let near = try Loop.Timer(after: .zero) { _ in
                trace("near fired")
                far.invalidate()
            }
            onceAsleep(loop) {
                loop.add(near, to: .default)
            }
        }
        #expect(result == .finished)
        #expect(trace.all == ["near fired"])
    }

    @Test("a repeating timer's tolerance is clamped to half its interval", arguments: backends)
    func toleranceClamped(_ backend: BackendKind) async throws {
        let timer = try Loop.Timer(after: .seconds(1), repeating: .milliseconds(10), tolerance: .milliseconds(8)) { _ in
        }
        #expect(timer.tolerance == .milliseconds(5))
        try timer.setTolerance(.milliseconds(2))
        #expect(timer.tolerance == .milliseconds(2))
        let oneShot = try Loop.Timer(after: .seconds(1), tolerance: .seconds(5)) { _ in }
        #expect(oneShot.tolerance == .seconds(5))
    }

    @Test("tolerance lets one wakeup serve a timer due later within another's window", arguments: backends)
    func toleranceCoalesces(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.record([.afterWaiting], into: trace)
            let start = loop.now
            // Wakes at 30 ms (the strict timer's instant), serving the tolerant one due at 10 ms.
            let tolerant = try Loop.Timer(fireAt: start + .milliseconds(10), tolerance: .milliseconds(200)) { _ in
                trace("tolerant early=\(loop.now < start + .milliseconds(10))")
            }
            let strict = try Loop.Timer(fireAt: start + .milliseconds(30)) { _ in trace("strict") }
            loop.add(tolerant, to: .default)
            loop.add(strict, to: .default)
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["afterWaiting", "tolerant early=false", "strict"])
    }

    @Test("a timer whose callback is running is not called from a nested run", arguments: backends)
    func noReentrantTimer(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let calls = Atomic<Int>(0)
            let timer = try Loop.Timer(after: .zero, repeating: .milliseconds(1)) { timer in
                let call = calls.add(1, ordering: .relaxed).newValue
                trace("enter \(call)")
                if call == 1 {
                    let stopper = try! Loop.Timer(after: .milliseconds(10)) { _ in
                        trace("stopper")
                        loop.stop()
                    }
                    loop.add(stopper, to: .default)
                    trace("nested \(loop.run(timeout: generousDeadline))")
                } else {
                    timer.invalidate()
                }
                trace("exit \(call)")
            }
            loop.add(timer, to: .default)
            trace("outer \(loop.run(timeout: generousDeadline))")
        }
        // Due many times during the nested run, the firing timer is not re-entered.
        #expect(trace.all == ["enter 1", "stopper", "nested stopped", "exit 1", "enter 2", "exit 2", "outer finished"])
    }

    @Test("a repeating timer invalidated in its own callback never fires again", arguments: backends)
    func invalidateInsideCallback(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            let timer = try Loop.Timer(after: .zero, repeating: .microseconds(100)) { timer in
                trace("fired")
                timer.invalidate()
            }
            loop.add(timer, to: .default)
        }
        #expect(result == .finished)
        #expect(trace.all == ["fired"])
    }

    @Test(
        "a timer removed from a mode stays valid and does not fire there; it fires in its other mode",
        arguments: backends)
    func removeFromOneMode(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let timer = try Loop.Timer(after: .zero) { _ in trace("fired in \(loop.currentMode!)") }
            loop.add(timer, to: .default)
            loop.add(timer, to: "other")
            loop.remove(timer, from: .default)
            trace("default: \(loop.run(timeout: generousDeadline)) valid=\(timer.isValid)")
            trace("other: \(loop.run("other", timeout: generousDeadline))")
        }
        #expect(trace.all == ["default: finished valid=true", "fired in other", "other: finished"])
    }

    @Test("a timer in a mode made common later fires there", arguments: backends)
    func timerReachesLateCommonMode(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.add(
                try Loop.Timer(after: .milliseconds(1)) { _ in trace("fired in \(loop.currentMode!)") }, to: .common)
            loop.addCommonMode("late")
            loop.run("late", timeout: generousDeadline)
        }
        #expect(trace.all == ["fired in late"])
    }

    @Test(
        "a timer invalidated from another thread while the loop sleeps never fires; the emptied run ends",
        .realTimeOnly(.otherThreadWhileAsleep), arguments: backends)
    func invalidateFromAnotherThread(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in trace("fired") }
            loop.add(timer, to: .default)
            onceAsleep(loop) {
                timer.invalidate()
            }
        }
        #expect(result == .finished)
        #expect(trace.all == [])
    }

    @Test(
        "a timer added to a second mode after it fell due still fires in its first mode",
        .realTimeOnly(.spinningTakesTime), arguments: backends)
    func addToSecondModeWhenOverdue(_ backend: BackendKind) async throws {
        let (result, trace) = try await traced(backend) { loop, trace in
            let timer = try Loop.Timer(after: .microseconds(100)) { _ in trace("fired in \(loop.currentMode!)") }
            loop.add(timer, to: "A")
            let overdue = ContinuousClock.now + .milliseconds(1)
            while ContinuousClock.now < overdue {}
            loop.add(timer, to: "B")
            loop.add(timer, to: "A") // Adding again has no effect.
            return loop.run("A", timeout: generousDeadline)
        }
        #expect(result == .finished)
        #expect(trace.all == ["fired in A"])
    }

    @Test(
        "timers due at the same instant with the same order fire in the order they were added, not made",
        arguments: backends)
    func tiesByAddOrder(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let instant = loop.now + .milliseconds(1)
            let madeFirst = try Loop.Timer(fireAt: instant) { _ in trace("made first, added second") }
            let madeSecond = try Loop.Timer(fireAt: instant) { _ in trace("made second, added first") }
            loop.add(madeSecond, to: .default)
            loop.add(madeFirst, to: .default)
            loop.run(timeout: generousDeadline)
        }
        #expect(trace.all == ["made second, added first", "made first, added second"])
    }

    @Test(
        "a next instant set from another thread while the callback runs re-arms the timer, even if earlier",
        arguments: backends)
    func setFromAnotherThreadWhileFiring(_ backend: BackendKind) async throws {
        let gap = try await onLoopThread(backend) { loop in
            let served = Lock<[ContinuousClock.Instant]>([])
            let timer = try Loop.Timer(after: .zero, repeating: .seconds(10)) { timer in
                let count = served.withLock {
                    $0.append(timer.nextFireInstant); return $0.count
                }
                if count == 1 {
                    let set = Latch()
                    _ = try? TestThread {
                        timer.nextFireInstant = loop.now + .milliseconds(50)
                        set.open()
                    }
                    set.wait()
                } else {
                    timer.invalidate()
                }
            }
            loop.add(timer, to: .default)
            loop.run(timeout: generousDeadline)
            let instants = served.withLock { $0 }
            return instants[1] - instants[0]
        }
        // Not the automatic advance of ten seconds: the re-arm from the other thread won.
        #expect(gap < .seconds(5))
        #expect(gap >= .milliseconds(50))
    }

    @Test("a timer freed by the loop may call back into the loop from its deinit", arguments: backends)
    func deinitCallsIntoLoop(_ backend: BackendKind) async throws {
        let victimValid = try await onLoopThread(backend) { loop in
            let victim = Loop.Source {}
            loop.add(victim, to: .default)
            do {
                let helper = InvalidatesOnDeinit(victim)
                let timer = try Loop.Timer(after: .seconds(3600)) { _ in _ = helper }
                loop.add(timer, to: .default)
                timer.invalidate() // Its queue entries now hold the last reference.
            }
            loop.run(timeout: .milliseconds(1))
            return victim.isValid
        }
        #expect(!victimValid)
    }
}

/// Invalidates a source when freed: a deinit that calls into a loop.
private final class InvalidatesOnDeinit: Sendable {
    let source: Loop.Source
    init(_ source: Loop.Source) { self.source = source }
    deinit { source.invalidate() }
}
