import CGLib
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// Runs nested in each other: the loop run from a GLib callback while GLib drives it, and a
/// GLib loop run from one of the loop's callbacks (which does not serve the loop: GLib blocks
/// a source while it dispatches it).
@Suite("RunLoopKitGLib: nested runs")
struct NestingTests {
    /// A GLib callback runs the loop itself (between the loop's prepare and GLib's next one):
    /// the nested run serves a block posted from another thread; afterwards GLib serves the
    /// loop again.
    @Test("a GLib callback may run the loop; GLib serves it again afterwards", arguments: embeddableBackends)
    func loopRunFromGLibCallback(_ backend: BackendKind) async throws {
        let trace = try await tracedAttached(backend) { loop, host, trace in
            let quitter = host.quitter
            host.timeout(milliseconds: 5) {
                let posted = Latch()
                _ = try? TestThread {
                    loop.perform { trace("block in the nested run") }
                    posted.open()
                }
                trace("posted: \(posted.wait())")
                let result = loop.run(.default, timeout: .milliseconds(20), returnAfterSourceHandled: false)
                trace("nested run: \(result)")
                _ = try? TestThread { loop.perform { trace("block served by GLib") } }
                return false
            }
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            host.run(until: { trace.all.last == "block served by GLib" }, quitter: quitter)
        }
        #expect(
            trace == [
                "posted: true", "block in the nested run", "nested run: \(Loop.RunResult.timedOut)",
                "block served by GLib",
            ])
    }

    /// A GLib loop nested in one of the loop's callbacks serves GLib's sources but not the
    /// loop's: a block posted meanwhile runs once the callback returns.
    @Test("a GLib loop nested in a loop callback does not serve the loop", arguments: embeddableBackends)
    func glibLoopInLoopCallback(_ backend: BackendKind) async throws {
        let trace = try await tracedAttached(backend) { loop, host, trace in
            let quitter = host.quitter
            loop.perform {
                trace("callback")
                let nested = g_main_loop_new(host.context, 0)!
                let blockPosted = Latch()
                _ = try? TestThread {
                    loop.perform { trace("posted block") }
                    blockPosted.open()
                }
                trace("posted: \(blockPosted.wait())")
                // The nested GLib loop serves GLib's timeouts, not the loop's block.
                var ticks = 0
                host.timeout(milliseconds: 2) {
                    ticks += 1
                    trace("glib tick \(ticks)")
                    if ticks == 3 { g_main_loop_quit(nested) }
                    return ticks < 3
                }
                g_main_loop_run(nested)
                g_main_loop_unref(nested)
                trace("callback returns")
            }
            host.run(until: { trace.all.last == "posted block" }, quitter: quitter)
        }
        #expect(
            trace == [
                "callback", "posted: true", "glib tick 1", "glib tick 2", "glib tick 3", "callback returns",
                "posted block",
            ])
    }

    /// Runs `body` on a loop attached to a GLib context of its own (``onGLibThread``), with a
    /// trace to record into; detaches, and returns what was traced.
    private func tracedAttached(
        _ backend: BackendKind, _ body: @escaping @Sendable (Loop, GLibHost, Trace) throws -> Void
    ) async throws -> [String] {
        try await onGLibThread(backend) { loop, host in
            let trace = Trace()
            let attachment = try loop.attach(to: host.reference)
            try body(loop, host, trace)
            attachment.detach()
            return trace.all
        }
    }
}
