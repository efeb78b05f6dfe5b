import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// The embedding API (Loop+Embedding.swift) driven by a host that is a plain `poll(2)` loop
/// (`PollHost`) on the loop's own thread, on every backend that offers a host descriptor.
/// Contract rules: W1 (stop), W2 (wakeUp), W3 (posting work wakes the loop), C2 (no lost
/// wakeups), T8 (timers never early).
@Suite("Embedding in a host loop")
struct EmbeddingTests {
    @Test("each backend offers a host descriptor, or says why not with a typed answer", arguments: backends)
    func descriptorOrTypedAnswer(_ kind: BackendKind) async throws {
        let answer: Result<Int32, Loop.EmbeddingError> = try await onLoopThread(kind) { loop in
            do throws(Loop.EmbeddingError) {
                return .success(try loop.hostDescriptor())
            } catch {
                return .failure(error)
            }
        }
        switch answer {
        case let .success(descriptor):
            #expect(descriptor >= 0)
            #expect(embeddableBackends.contains(kind))
            #expect(kind != .libevent, "libevent has no descriptor to offer")
        case let .failure(.unsupported(failed, reason)):
            #expect(failed == kind)
            #expect(!reason.isEmpty)
            #expect(!embeddableBackends.contains(kind))
            #expect(kind != .epoll && kind != .uring, "\(kind) must offer its descriptor")
        case let .failure(error):
            Issue.record("a running loop's answer: \(error)")
        }
    }

    @Test("libevent says unsupported, with its reason", .enabled(if: backends.contains(.libevent)))
    func libeventUnsupported() async throws {
        let error: Loop.EmbeddingError? = try await onLoopThread(.libevent) { loop in
            do throws(Loop.EmbeddingError) {
                _ = try loop.hostDescriptor()
                return nil
            } catch {
                return error
            }
        }
        guard case let .unsupported(kind, reason) = error else {
            Issue.record("expected .unsupported, got \(String(describing: error))")
            return
        }
        #expect(kind == .libevent)
        #expect(reason.contains("event_base"))
        #expect(error!.description.contains("libevent"))
    }

    @Test("timers fire, in order, never before their instant", arguments: embeddableBackends)
    func timersNeverEarly(_ kind: BackendKind) async throws {
        let fired = Lock<[(Int, ContinuousClock.Instant, ContinuousClock.Instant)]>([])
        let (completed, due) = try await onHostedLoop(kind) { loop, host in
            let start = ContinuousClock.now
            // Sub-millisecond parts: the host's millisecond rounding must round up. Offsets far
            // beyond what adding a timer takes, even under a sanitizer on a loaded machine.
            let offsets: [Duration] = [.microseconds(100_500), .microseconds(50_300), .microseconds(150_700)]
            var due: [ContinuousClock.Instant] = []
            for (index, offset) in offsets.enumerated() {
                let instant = start + offset
                loop.add(
                    try Loop.Timer(fireAt: instant) { _ in
                        fired.withLock { $0.append((index, instant, ContinuousClock.now)) }
                    }, to: .default)
                // When it is due, at the latest: an instant already past when it was added means
                // "now", that is, its adding (T1), which the clock read here follows.
                due.append(max(instant, ContinuousClock.now))
            }
            return (host.run(until: { fired.withLock { $0.count } == 3 }), due)
        }
        #expect(completed)
        let record = fired.withLock { $0 }
        // By instant (T11): [1, 0, 2], unless adding them took longer than their offsets.
        #expect(record.map(\.0) == due.indices.sorted { due[$0] < due[$1] })
        for (index, instant, at) in record { #expect(at >= instant, "timer \(index) fired early") }
    }

    @Test(
        "the host's deadline is a timer's instant plus its tolerance, and its milliseconds end within that window",
        arguments: embeddableBackends)
    func deadlineWithinTolerance(_ kind: BackendKind) async throws {
        let tolerance = Duration.milliseconds(40)
        // The instant is taken on the loop's thread: the test may wait for that thread to start
        // (onLoopThread runs one per CPU at once) longer than the instant is away.
        let (instant, waits) = try await onLoopThread(kind) { loop in
            let instant = ContinuousClock.now + .seconds(100)
            let exact = try Loop.Timer(fireAt: instant) { _ in }
            loop.add(exact, to: .default)
            let first = loop.prepareForHost()
            loop.dispatchForHost()
            loop.remove(exact, from: .default)
            loop.add(try Loop.Timer(fireAt: instant, tolerance: tolerance) { _ in }, to: .default)
            let second = loop.prepareForHost()
            loop.dispatchForHost()
            return (instant, (first, second))
        }
        #expect(!waits.0.isReady && waits.0.deadline == instant)
        #expect(!waits.1.isReady && waits.1.deadline == instant + tolerance, "tolerance counted once")
        // Seen from just under 2 ms before the instant (a fraction of a millisecond to round).
        let now = instant - .microseconds(1_700)
        #expect(waits.0.timeoutMilliseconds(from: now) == 2, "rounded up: never before the instant")
        let milliseconds = waits.1.timeoutMilliseconds(from: now)
        let end = now + .milliseconds(Int64(milliseconds))
        #expect(end >= instant && end <= instant + tolerance, "\(milliseconds) ms ends within the window")
        #expect(waits.1.timeout(from: now) == .microseconds(1_700) + tolerance)
    }

    @Test("a pipe source is served when another thread writes", arguments: embeddableBackends)
    func pipeSource(_ kind: BackendKind) async throws {
        try await withPipe { pipe in
            let handled = AtomicInt()
            let completed = try await onHostedLoop(kind) { loop, host in
                loop.add(
                    try Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                        _ = handled.increment()
                        _ = pipe.drain()
                    }, to: .default)
                let writer = try whenAsleep(loop) {
                    pipe.fill()
                }
                let served = host.run(until: { handled.value == 1 })
                let joined = writer.join()
                // Drained: the host sleeps on (for the host's own short limit) without dispatching.
                let outcome = host.iterate(limit: .milliseconds(20))
                return served && joined && outcome == .hostLimit
            }
            #expect(completed)
            #expect(handled.value == 1)
        }
    }

    @Test(
        "perform from several threads: every block runs once, in order per poster",
        arguments: embeddableBackends)
    func performsFromThreads(_ kind: BackendKind) async throws {
        let posters = 4
        let each = scaled(500, minimum: 20)
        let ran = Lock<[[Int]]>(Array(repeating: [], count: posters))
        let completed = try await onHostedLoop(kind) { loop, host in
            let threads = try (0..<posters).map { poster in
                try TestThread {
                    for index in 0..<each {
                        loop.perform { ran.withLock { $0[poster].append(index) } }
                        if index % 50 == 0 { sched_yield() }
                    }
                }
            }
            let served = host.run(until: { ran.withLock { $0.map(\.count).reduce(0, +) } == posters * each })
            return served && threads.allSatisfy { $0.join() }
        }
        #expect(completed)
        for (poster, indices) in ran.withLock({ $0 }).enumerated() {
            #expect(indices == Array(0..<each), "poster \(poster)'s blocks, each once and in order")
        }
    }

    @Test("a source signalled from another thread is performed", arguments: embeddableBackends)
    func signalFromThread(_ kind: BackendKind) async throws {
        let performed = AtomicInt()
        let completed = try await onHostedLoop(kind) { loop, host in
            let source = Loop.Source { _ = performed.increment() }
            loop.add(source, to: .default)
            let signaller = try whenAsleep(loop) {
                source.signal()
            }
            let served = host.run(until: { performed.value == 1 })
            return served && signaller.join()
        }
        #expect(completed)
        #expect(performed.value == 1)
    }

    @Test("wakeUp from another thread makes the host's descriptor readable (W2)", arguments: embeddableBackends)
    func wakeUpFromThread(_ kind: BackendKind) async throws {
        let outcome = try await onHostedLoop(kind) { loop, host in
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            let waker = try whenAsleep(loop) {
                loop.wakeUp()
            }
            let outcome = host.iterate()
            return (outcome, waker.join(), host.results)
        }
        #expect(outcome.0 == .readable)
        #expect(outcome.1)
        #expect(outcome.2 == [.timedOut])
    }

    @Test("stop from another thread wakes the host, whose dispatch returns stopped (W1)", arguments: embeddableBackends)
    func stopFromThread(_ kind: BackendKind) async throws {
        let outcome = try await onHostedLoop(kind) { loop, host in
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            let stopper = try whenAsleep(loop) {
                loop.stop()
            }
            let first = host.iterate()
            // The stop was for that dispatch only: the next wait sleeps (the host's limit).
            let second = host.iterate(limit: .milliseconds(20))
            return (first, second, stopper.join(), host.results)
        }
        #expect(outcome.0 == .readable)
        #expect(outcome.1 == .hostLimit)
        #expect(outcome.2)
        #expect(outcome.3 == [.stopped])
    }

    @Test("stop from a callout of the dispatch makes that dispatch return stopped", arguments: embeddableBackends)
    func stopFromCallout(_ kind: BackendKind) async throws {
        let results = try await onHostedLoop(kind) { loop, host in
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            loop.perform { loop.stop() }
            host.iterate()
            loop.perform {}
            host.iterate()
            return host.results
        }
        #expect(results == [.stopped, .timedOut])
    }

    @Test(
        "an empty mode: the host sleeps without deadline, a block posted from another thread wakes it, and the dispatch finishes once it is empty again",
        arguments: embeddableBackends)
    func emptyMode(_ kind: BackendKind) async throws {
        let ran = AtomicInt()
        let outcome = try await onHostedLoop(kind) { loop, host in
            let wait = loop.prepareForHost()
            let idle = (wait.deadline, wait.isReady, wait.timeoutMilliseconds())
            let first = loop.dispatchForHost()
            let poster = try whenAsleep(loop) {
                loop.perform { _ = ran.increment() }
            }
            let woke = host.iterate()
            let emptyAgain = loop.prepareForHost()
            let last = loop.dispatchForHost()
            // The dispatches consumed their wakes: nothing is readable now.
            let quiet = host.iterate(limit: .milliseconds(20))
            return (
                idle.0 == nil && first == .finished, idle.1, idle.2, woke, host.results, emptyAgain.isReady, last,
                quiet, poster.join()
            )
        }
        #expect(outcome.0, "an empty mode's first wait has no deadline, and its dispatch finishes")
        #expect(!outcome.1)
        #expect(outcome.2 == -1)
        #expect(outcome.3 == .readable)
        #expect(outcome.4 == [.timedOut])
        #expect(!outcome.5)
        #expect(outcome.6 == .finished)
        #expect(outcome.7 == .hostLimit)
        #expect(outcome.8)
        #expect(ran.value == 1)
    }

    @Test(
        "a run nested between the host's prepare and its dispatch is the loop's current run, and work posted after it still reaches the host (H1)",
        arguments: embeddableBackends)
    func nestedRunBetweenPrepareAndDispatch(_ kind: BackendKind) async throws {
        let nested = Loop.Mode("nested-in-host-wait")
        let ran = AtomicInt()
        let outcome = try await onLoopThread(kind) { loop in
            let descriptor = try loop.hostDescriptor()
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: nested)
            _ = loop.prepareForHost()
            // A host callback runs the loop nested (GLib's sources may): that run sleeps and
            // wakes by itself, so when it returns the loop no longer publishes the host's sleep.
            let modeInRun = Lock<Loop.Mode?>(nil)
            loop.perform(in: [nested]) { modeInRun.withLock { $0 = loop.currentMode } }
            loop.run(nested, timeout: .milliseconds(1))
            // Posted once the nested run has returned, before the host polls: nothing but the
            // loop's own care can make the descriptor readable now.
            let poster = try TestThread { loop.perform { _ = ran.increment() } }
            let posted = poster.join()
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let polled = poll(&entry, 1, PollHost.milliseconds(roundingUp: generousDeadline))
            let result = loop.dispatchForHost()
            return (modeInRun.withLock { $0 }, posted, polled, result)
        }
        #expect(outcome.0 == nested)
        #expect(outcome.1)
        #expect(outcome.2 == 1, "the host's descriptor did not become readable")
        #expect(outcome.3 == .timedOut)
        #expect(ran.value == 1)
    }

    @Test(
        "a host waiting inside a run's callout: a stop made while it waits also stops that run, whether the host dispatches or abandons its wait (W1, H1)",
        arguments: embeddableBackends, [true, false])
    func stopWhileHostWaitsInCallout(_ kind: BackendKind, dispatches: Bool) async throws {
        let outcome = try await onLoopThread(kind) { loop in
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            // What the callout saw: the stopper joined, and the host's dispatch result if any.
            let inCallout = Lock<(joined: Bool, dispatched: Loop.RunResult?)?>(nil)
            loop.perform {
                // A GLib loop run from a callout does this: it waits for the loop in the run's
                // mode, so the host's wait is now the innermost run, and a stop lands on it.
                _ = loop.prepareForHost()
                let joined = (try? whenAsleep(loop) { loop.stop() })?.join() ?? false
                let dispatched: Loop.RunResult? = dispatches ? loop.dispatchForHost() : nil
                if !dispatches { loop.cancelHostWait() }
                inCallout.withLock { $0 = (joined, dispatched) }
            }
            // Without the stop the run lasts this long, firing nothing (long enough that a
            // callout slowed by a loaded machine cannot end it first).
            let result = loop.run(.default, timeout: hangDeadline)
            return (result, inCallout.withLock { $0 })
        }
        let callout = try #require(outcome.1, "the callout did not run")
        #expect(callout.joined, "the stopping thread did not finish")
        #expect(callout.dispatched == (dispatches ? .stopped : nil))
        #expect(outcome.0 == .stopped, "the run the host waited in did not stop")
    }

    @Test("preparing twice without a dispatch loses nothing", arguments: embeddableBackends)
    func prepareTwice(_ kind: BackendKind) async throws {
        let ran = AtomicInt()
        let completed = try await onHostedLoop(kind) { loop, host in
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            // A post lands during the first prepared wait, which the host abandons (as GLib
            // does when its check finds nothing): the second wait must still see it.
            _ = loop.prepareForHost()
            let poster = try whenAsleep(loop) {
                loop.perform { _ = ran.increment() }
            }
            let posted = poster.join()
            _ = loop.prepareForHost()
            let served = host.run(until: { ran.value == 1 })
            return posted && served
        }
        #expect(completed)
        #expect(ran.value == 1)
    }

    @Test("a loop torn down: hostDescriptor throws loopEnded", arguments: embeddableBackends)
    func tornDown(_ kind: BackendKind) async throws {
        let made = Lock<Loop?>(nil)
        let thread = try TestThread { made.withLock { $0 = try? Loop.current(backend: kind) } }
        #expect(thread.join())
        let loop = try #require(made.withLock { $0.take() })
        // The thread's exit tears the loop down; wait for it (the latch may open just before).
        let end = ContinuousClock.now + generousDeadline
        var answer: Loop.EmbeddingError?
        while answer == nil, ContinuousClock.now < end {
            do throws(Loop.EmbeddingError) {
                _ = try loop.hostDescriptor()
                sched_yield()
            } catch {
                answer = error
            }
        }
        #expect(answer == .loopEnded)
    }

    @Test(
        "an idle host does not spin: no dispatch while a timer is far away, and little CPU time",
        arguments: embeddableBackends)
    func idleDoesNotSpin(_ kind: BackendKind) async throws {
        let stretch = Duration.milliseconds(300)
        let outcome = try await onHostedLoop(kind) { loop, host in
            let pipe = try Pipe()
            defer { pipe.close() }
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            loop.add(try Loop.Source(fileDescriptor: pipe.readEnd) { _ in _ = pipe.drain() }, to: .default)
            // Warm up: a post and a wake that the dispatches consume, then idle.
            loop.perform {}
            loop.wakeUp()
            pipe.fill()
            host.idle(for: .milliseconds(20))
            let (iterations, cpu) = (host.iterations, threadCPUTime())
            host.idle(for: stretch)
            return (host.iterations - iterations, threadCPUTime() - cpu)
        }
        #expect(outcome.0 <= 2, "the host dispatched \(outcome.0) times while idle")
        // A spinning host uses about the whole stretch; a sleeping one almost none.
        #expect(outcome.1 < stretch / 2, "the idle host used \(outcome.1) of CPU time in \(stretch)")
    }
}
