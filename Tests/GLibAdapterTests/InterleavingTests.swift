import CGLib
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// A loop attached to a GLib context is served by that context's GMainLoop, between GLib's own
/// sources, on the loop's thread.
@Suite("RunLoopKitGLib: a loop served by a GMainLoop")
struct InterleavingTests {
    /// A chain that hands over from GLib to the loop and back: each step starts the next, so
    /// the order is fixed, and it only completes if the GMainLoop serves both.
    @Test("GLib timeouts and idles hand over to RunLoopKit timers and blocks and back", arguments: embeddableBackends)
    func handOverChain(_ backend: BackendKind) async throws {
        let (trace, early) = try await onGLibThread(backend) { loop, host in
            let trace = Trace()
            let early = Violations()
            let attachment = try loop.attach(to: host.reference)
            let onLoopThread: @Sendable () -> Bool = { Loop.currentIfCreated === loop }
            @Sendable func rlkTimer(
                _ name: String, after delay: Duration, then next: @escaping @Sendable () -> Void
            ) throws {
                let due = ContinuousClock.now + delay
                loop.add(
                    try Loop.Timer(fireAt: due) { _ in
                        if ContinuousClock.now < due { early.record("\(name) fired before its time") }
                        trace("\(name) on loop thread: \(onLoopThread())")
                        next()
                    }, to: .default)
            }
            let quitter = host.quitter
            host.timeout(milliseconds: 1) {
                trace("glib timeout 1 on loop thread: \(onLoopThread())")
                try! rlkTimer("loop timer 1", after: .milliseconds(2)) {
                    // Back to GLib: an idle on the context, from the loop's callback.
                    host.idle {
                        trace("glib idle on loop thread: \(onLoopThread())")
                        loop.perform {
                            trace("loop block on loop thread: \(onLoopThread())")
                            try! rlkTimer("loop timer 2", after: .milliseconds(3)) {
                                trace("done")
                                quitter.quit()
                            }
                        }
                        return false
                    }
                }
                return false
            }
            host.run()
            attachment.detach()
            return (trace.all, early)
        }
        #expect(
            trace == [
                "glib timeout 1 on loop thread: true", "loop timer 1 on loop thread: true",
                "glib idle on loop thread: true", "loop block on loop thread: true",
                "loop timer 2 on loop thread: true",
                "done",
            ])
        #expect(early.count == 0, "\(early.first.joined(separator: "; "))")
    }

    /// GLib's sources and the loop's, independent of each other, all run, once each, on the
    /// loop's thread: GLib timeouts and an idle, RunLoopKit timers (never early), a pipe source
    /// fed from another thread, and blocks performed from other threads.
    @Test("GLib and RunLoopKit sources all run while GLib drives, once each", arguments: embeddableBackends)
    func everythingRuns(_ backend: BackendKind) async throws {
        let threads = 3
        let blocksPerThread = 20
        let (counts, violations) = try await onGLibThread(backend) { loop, host in
            let counts = Lock<[String: Int]>([:])
            let violations = Violations()
            let expected = 2 + 1 + 3 + 1 + threads * blocksPerThread
            let quitter = host.quitter
            let count: @Sendable (String) -> Void = { event in
                if Loop.currentIfCreated !== loop { violations.record("\(event) ran off the loop's thread") }
                let total = counts.withLock { counts in
                    counts[event, default: 0] += 1
                    return counts.values.reduce(0, +)
                }
                if total == expected { quitter.quit() }
            }
            let attachment = try loop.attach(to: host.reference)
            for milliseconds: UInt32 in [2, 7] {
                host.timeout(milliseconds: milliseconds) {
                    count("glib timeout \(milliseconds)")
                    return false
                }
            }
            host.idle {
                count("glib idle")
                return false
            }
            for milliseconds in [1, 5, 12] {
                let due = ContinuousClock.now + .milliseconds(milliseconds)
                loop.add(
                    try Loop.Timer(fireAt: due) { _ in
                        if ContinuousClock.now < due {
                            violations.record("the \(milliseconds) ms timer fired early")
                        }
                        count("loop timer \(milliseconds)")
                    }, to: .default)
            }
            let pipe = try Pipe()
            defer { pipe.close() }
            let pipeSource = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                if pipe.drain() > 0 { count("pipe") }
            }
            loop.add(pipeSource, to: .default)
            _ = try TestThread { pipe.fill() }
            for thread in 0..<threads {
                _ = try TestThread {
                    for index in 0..<blocksPerThread { loop.perform { count("block \(thread).\(index)") } }
                }
            }
            host.run()
            pipeSource.invalidate()
            attachment.detach()
            return (counts.withLock { $0 }, violations)
        }
        var expected = ["glib timeout 2": 1, "glib timeout 7": 1, "glib idle": 1, "pipe": 1]
        for milliseconds in [1, 5, 12] { expected["loop timer \(milliseconds)"] = 1 }
        for thread in 0..<threads {
            for index in 0..<blocksPerThread { expected["block \(thread).\(index)"] = 1 }
        }
        #expect(counts == expected)
        #expect(violations.count == 0, "\(violations.first.joined(separator: "; "))")
    }
}
