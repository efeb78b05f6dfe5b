import CGLib
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// An idle attached loop costs GLib no iterations of its own: GLib's context wakes for its
/// own sources only. Counted in the loop's passes and the context's iterations, not in time.
@Suite("RunLoopKitGLib: idle")
struct IdleTests {
    /// GLib waits for a 200 ms timeout. With an idle loop attached (a timer far away, a block
    /// that ran), the loop is dispatched at most once in the first such stretch (a wake posted
    /// after its block was already served is drained once), and never after that. Counted in
    /// the loop's passes (one per dispatch), not in GLib's iterations, which GLib's own wake-ups
    /// add to: the first poll after the attach finds GLib's wake-up descriptor written (adding a
    /// descriptor to an attached source writes it; `strace` shows it read then), and a signal
    /// or another thread's GLib call ends a poll too (CI once counted four iterations for one
    /// timeout under the full suite). A loop whose wake were not consumed would be dispatched in
    /// every iteration and make GLib spin: thousands of both.
    @Test(
        "an idle attached loop is not dispatched by GLib once settled, nor makes it spin", arguments: embeddableBackends
    )
    func idleCostsNoIterations(_ backend: BackendKind) async throws {
        let (settling, settled) = try await onGLibThread(backend) { loop, host in
            let attachment = try loop.attach(to: host.reference)
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            // A block from another thread wakes the loop once.
            let ran = Latch()
            _ = try TestThread { loop.perform { ran.open() } }
            _ = host.iterations(until: { ran.isOpen })
            let settling = Self.stretchUntilTimeout(host, loop)
            let settled = Self.stretchUntilTimeout(host, loop)
            attachment.detach()
            return (settling, settled)
        }
        #expect(settling.passes <= 1, "with an idle loop attached, first: \(settling)")
        #expect(settled.passes == 0, "with an idle loop attached, settled: \(settled)")
        // Not the loop's doing, but bounded: a spinning GLib would count thousands.
        #expect(settling.iterations < 20 && settled.iterations < 20, "first: \(settling), settled: \(settled)")
    }

    /// One stretch until a GLib timeout: GLib's iterations and the loop's passes in it.
    struct Stretch: CustomStringConvertible {
        let iterations: Int
        let passes: UInt64
        var description: String { "\(iterations) GLib iterations, \(passes) passes of the loop" }
    }

    /// Iterates the context until a 200 ms GLib timeout fires, counting the loop's passes.
    private static func stretchUntilTimeout(_ host: GLibHost, _ loop: Loop) -> Stretch {
        let before = loop.statistics.passes
        let iterations = iterationsUntilTimeout(host)
        return Stretch(iterations: iterations, passes: loop.statistics.passes - before)
    }

    /// The context's iterations until a 200 ms GLib timeout fires.
    private static func iterationsUntilTimeout(_ host: GLibHost) -> Int {
        var fired = false
        host.timeout(milliseconds: 200) {
            fired = true
            return false
        }
        return host.iterations(until: { fired })
    }
}
