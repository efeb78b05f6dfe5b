#if Libevent
import Glibc
import RunLoopKit
import RunLoopBackendLibevent
import Synchronization
import TestSupport
import Testing

/// What only the libevent backend promises, beyond the conformance suite that runs on it too.
///
/// Serialized: the descriptor count and the timing test must not see each other's threads.
@Suite(
    "Libevent backend", .serialized,
    .enabled(if: backends.contains(.libevent), "libevent cannot start here: see Backend availability"))
struct LibeventBackendTests {
    @Test("200 µs waits are never early, nor rounded up to whole milliseconds (precise timer)")
    func preciseTimer() async throws {
        let lateness = try await offThePool {
            let backend = try LibeventBackend()
            var events: [ReadyEvent] = []
            var lateness: [Duration] = []
            for _ in 0..<200 {
                let start = ContinuousClock.now
                try waitOut(backend, timeout: .microseconds(200), into: &events)
                lateness.append(ContinuousClock.now - start - .microseconds(200))
            }
            return lateness.sorted()
        }
        #expect(lateness.first! >= .zero, "a wait returned early: \(lateness.first!) late")
        // Without EVENT_BASE_FLAG_PRECISE_TIMER libevent waits whole milliseconds: every 200 µs
        // wait would then be at least 800 µs late. With it, the least late of 200 waits is far
        // below that, even when a loaded machine (or the Thread Sanitizer) makes most of them
        // late: the median is timing, and belongs to the benchmarks.
        #expect(lateness.first! < .microseconds(600), "even the least late of 200 waits was \(lateness.first!) late")
    }

    @Test("a pipe left unread is reported by two consecutive waits (level-triggered)")
    func levelTriggered() async throws {
        try await offThePool {
            let backend = try LibeventBackend()
            let pipe = try Pipe()
            defer { pipe.close() }
            pipe.fill()
            let token = Token(rawValue: 7)
            try backend.register(pipe.readEnd, token: token, interest: .readable)
            var events: [ReadyEvent] = []
            for _ in 0..<2 {
                try waitOut(backend, timeout: generousDeadline, into: &events)
                #expect(events == [ReadyEvent(token: token, readiness: .readable)])
            }
            // Once drained and unregistered it is quiet; unregistering it again (closed) is fine.
            pipe.drain()
            try waitOut(backend, timeout: .zero, into: &events)
            #expect(events.isEmpty)
            try backend.unregister(pipe.readEnd, token: token)
            try backend.unregister(pipe.readEnd, token: token)
        }
    }

    @Test("a wake posted before a wait makes that wait return at once, and only that wait")
    func wakeBeforeWaitIsNotLost() async throws {
        try await offThePool {
            let backend = try LibeventBackend()
            let waker = backend.waker
            let woken = Latch()
            _ = try TestThread {
                waker.wake()
                waker.wake() // Coalesced with the first.
                woken.open()
            }
            #expect(woken.wait())
            var events: [ReadyEvent] = []
            let start = ContinuousClock.now
            try waitOut(backend, timeout: generousDeadline, into: &events)
            #expect(ContinuousClock.now - start < generousDeadline)
            #expect(events.isEmpty, "the waker is not a ready event")
            // The wake was consumed: the next wait sleeps for its whole timeout.
            let again = ContinuousClock.now
            try waitOut(backend, timeout: .milliseconds(20), into: &events)
            #expect(ContinuousClock.now - again >= .milliseconds(20))
        }
    }

    @Test("user libevent events on the loop's event_base fire inside its wait, on its thread")
    func eventBaseAccess() async throws {
        try await withPipe { pipe in
            let fired = try await onLoopThread(.libevent) { loop -> [String] in
                let trace = Trace()
                let loopThread = pthread_self()
                // Keeps the mode alive; never fires within the test.
                let keepAlive = try Loop.Timer(after: generousDeadline) { _ in }
                loop.add(keepAlive, to: .default)
                defer { keepAlive.invalidate() }
                let (timer, reader) = loop.withEventBase { base in
                    let timer = ForeignEvent(base: base) { what in
                        trace(
                            "timer what=\(what) onLoopThread=\(pthread_equal(pthread_self(), loopThread) != 0) waiting=\(loop.isWaiting)"
                        )
                        pipe.fill()
                    }
                    let reader = ForeignEvent(base: base, descriptor: pipe.readEnd, persist: true) { what in
                        trace("readable what=\(what) waiting=\(loop.isWaiting)")
                        pipe.drain()
                        loop.stop()
                    }
                    return (timer!, reader!)
                }
                #expect(reader.add())
                #expect(timer.add(timeout: .milliseconds(1)))
                #expect(loop.run(timeout: generousDeadline) == .stopped)
                // Users remove their events before the loop's thread exits.
                reader.remove()
                timer.remove()
                #expect(loop.withEventBase { $0 } == loop.withBackend { ($0 as! LibeventBackend).eventBase })
                return trace.all
            }
            #expect(fired == ["timer what=1 onLoopThread=true waiting=true", "readable what=2 waiting=true"])
        }
    }

    @Test("1,000 libevent loops, each on its own thread, leave no descriptor open")
    func noDescriptorLeak() async throws {
        try await withPipe { pipe in
            pipe.fill()
            let before = openDescriptors()
            for _ in 0..<1_000 {
                let ran = Latch()
                _ = try TestThread {
                    do {
                        let loop = try Loop.current(backend: .libevent)
                        let source = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in }
                        let timer = try Loop.Timer(after: .microseconds(10)) { _ in }
                        loop.add(source, to: .default)
                        loop.add(timer, to: .default)
                        _ = loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
                    } catch {
                        Issue.record("a loop thread failed: \(error)")
                    }
                    ran.open()
                }
                #expect(ran.wait())
            }
            // A loop is torn down when its thread exits, just after the body: wait for the count to
            // come back. Other suites run in parallel and open and close descriptors of their own
            // meanwhile (a loop and its pipes: a dozen or so per test, a few hundred at most), so
            // no exact count can be expected; a backend that leaked would leave at least one
            // descriptor per loop, a thousand more, which no parallel test comes near.
            let tolerance = 500
            let deadline = ContinuousClock.now + generousDeadline
            var after = openDescriptors()
            while after.count >= before.count + tolerance, ContinuousClock.now < deadline {
                _ = Latch().wait(for: .milliseconds(2))
                after = openDescriptors()
            }
            #expect(
                after.count < before.count + tolerance,
                "new descriptors, first 20: \(after.subtracting(before).sorted().prefix(20))")
        }
    }
}

/// The process's open descriptors, as "number → target" lines from /proc/self/fd.
private func openDescriptors() -> Set<String> {
    guard let listing = directoryListing("/proc/self/fd") else { return [] }
    var entries: Set<String> = []
    for name in listing.names {
        guard let number = Int32(name), number != listing.ownDescriptor else { continue }
        entries.insert("\(name) → \(descriptorLink(number) ?? "?")")
    }
    return entries
}

#endif
