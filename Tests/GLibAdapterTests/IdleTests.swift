import CGLib
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// An idle attached loop costs GLib no iterations of its own: GLib's context wakes for its
/// own sources only. Counted in iterations of the context, not in time.
@Suite("RunLoopKitGLib: idle")
struct IdleTests {
    /// GLib waits for a 200 ms timeout: alone, that takes one iteration (two at most, if its
    /// poll woke early). With an idle loop attached (a timer far away, a block that ran), the
    /// first such stretch may take one more (a wake posted after its block was already served
    /// is drained once); after that, none more than alone. A loop whose wake were not consumed
    /// would make GLib spin: thousands.
    @Test("an idle attached loop adds no GLib iterations once settled", arguments: embeddableBackends)
    func idleCostsNoIterations(_ backend: BackendKind) async throws {
        let (alone, settling, settled) = try await onGLibThread(backend) { loop, host in
            let alone = Self.iterationsUntilTimeout(host)
            let attachment = try loop.attach(to: host.reference)
            loop.add(try Loop.Timer(after: .seconds(3600)) { _ in }, to: .default)
            // A block from another thread wakes the loop once.
            let ran = Latch()
            _ = try TestThread { loop.perform { ran.open() } }
            _ = host.iterations(until: { ran.isOpen })
            let settling = Self.iterationsUntilTimeout(host)
            let settled = Self.iterationsUntilTimeout(host)
            attachment.detach()
            return (alone, settling, settled)
        }
        #expect(alone <= 2, "GLib alone took \(alone) iterations for one timeout")
        #expect(settling <= alone + 1, "with an idle loop attached, first: \(settling) iterations, alone: \(alone)")
        #expect(settled <= 2, "with an idle loop attached, settled: \(settled) iterations, alone: \(alone)")
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
