import CGLib
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// Posts from several threads while GLib iterates (its own sources busy too): every post runs
/// once, on the loop's thread. The window: a post that lands between the loop's prepare (it
/// publishes that it sleeps) and GLib's poll, or during a dispatch, must make the descriptor
/// readable or be seen by the pass.
@Suite("RunLoopKitGLib: stress")
struct GLibStressTests {
    @Test("posts from several threads while GLib iterates all run once", arguments: embeddableBackends)
    func postsWhileGLibIterates(_ backend: BackendKind) async throws {
        let threads = 4
        let perThread = scaled(20_000, minimum: 200)
        let (runs, violations) = try await onGLibThread(backend) { loop, host in
            let runs = (0..<threads).map { _ in AtomicInt() }
            let violations = Violations()
            let total = AtomicInt()
            let quitter = host.quitter
            let attachment = try loop.attach(to: host.reference)
            // GLib's own traffic: a 1 ms timeout that adds an idle each time; GLib still sleeps in its
            // poll between them, where the posts must wake it through the loop's descriptor.
            host.timeout(milliseconds: 1) {
                host.idle { false }
                return true
            }
            for thread in 0..<threads {
                _ = try TestThread {
                    for index in 0..<perThread {
                        loop.perform {
                            if Loop.currentIfCreated !== loop {
                                violations.record("a block ran off the loop's thread")
                            }
                            if runs[thread].increment() != index + 1 {
                                violations.record("thread \(thread)'s block \(index) ran out of order")
                            }
                            if total.increment() == threads * perThread { quitter.quit() }
                        }
                    }
                }
            }
            host.run()
            attachment.detach()
            return (runs.map(\.value), violations)
        }
        #expect(runs == Array(repeating: perThread, count: threads))
        #expect(violations.count == 0, "\(violations.first.joined(separator: "; "))")
    }
}
