import CGLib
import Glibc
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// Attaching and detaching: what detach stops, attaching again, what is refused.
@Suite("RunLoopKitGLib: attach and detach")
struct AttachmentTests {
    /// Detached while the loop waits for GLib (prepared, nothing to dispatch), the loop is no
    /// longer in the host's mode; a block posted afterwards from another thread does not run
    /// from GLib's iterations; attached again, it runs.
    @Test(
        "detach stops the loop being served and ends its host wait; attaching again serves it",
        arguments: embeddableBackends)
    func detachStopsAndReattachServes(_ backend: BackendKind) async throws {
        let trace = try await onGLibThread(backend) { loop, host in
            let trace = Trace()
            let attachment = try loop.attach(to: host.reference)
            trace("attached: \(attachment.isAttached)")
            // The loop has nothing to do: GLib prepared it and polls; the timeout's callback
            // runs in an iteration where the loop's source was prepared but not dispatched.
            host.timeout(milliseconds: 5) {
                trace("mode while GLib waits: \(loop.currentMode.map { "\($0)" } ?? "none")")
                attachment.detach()
                trace("mode after detach: \(loop.currentMode.map { "\($0)" } ?? "none")")
                attachment.detach() // idempotent
                trace("attached: \(attachment.isAttached)")
                return false
            }
            let posted = Latch()
            let ended = Latch()
            _ = host.iterations(until: { !attachment.isAttached })
            _ = try TestThread {
                loop.perform { trace("late block") }
                posted.open()
            }
            #expect(posted.wait())
            // GLib iterates a while on its own: a timeout it serves after the post proves
            // that iterations happened without the block.
            host.timeout(milliseconds: 20) {
                trace("glib timeout after the post")
                ended.open()
                return false
            }
            _ = host.iterations(until: { ended.isOpen })
            let again = try loop.attach(to: host.reference)
            _ = host.iterations(until: { trace.all.last == "late block" })
            again.detach()
            trace("attached again, then detached: \(again.isAttached)")
            return trace.all
        }
        #expect(
            trace == [
                "attached: true", "mode while GLib waits: kRunLoopDefaultMode", "mode after detach: none",
                "attached: false",
                "glib timeout after the post", "late block", "attached again, then detached: false",
            ])
    }

    @Test("a loop attached already is refused until it is detached", arguments: embeddableBackends)
    func secondAttachRefused(_ backend: BackendKind) async throws {
        let outcomes = try await onGLibThread(backend) { loop, host in
            let first = try loop.attach(to: host.reference)
            var outcomes: [String] = []
            for context in [host.reference, GLibMainContext.default] {
                do {
                    _ = try loop.attach(to: context)
                    outcomes.append("attached twice")
                } catch {
                    outcomes.append("\(error)")
                }
            }
            first.detach()
            let second = try loop.attach(to: host.reference)
            outcomes.append("after detach: \(second.isAttached)")
            second.detach()
            return outcomes
        }
        let refused = "\(GLibAttachError.alreadyAttached)"
        #expect(outcomes == [refused, refused, "after detach: true"])
    }

    @Test("a backend without the embedding descriptor is refused with its reason", arguments: nonEmbeddableBackends)
    func nonEmbeddableRefused(_ backend: BackendKind) async throws {
        let outcome = try await onGLibThread(backend) { loop, host in
            do throws(GLibAttachError) {
                _ = try loop.attach(to: host.reference)
                return "attached"
            } catch {
                guard case .embedding(.unsupported(backend, reason: _)) = error else { return "other: \(error)" }
                return "refused: unsupported"
            }
        }
        #expect(outcome == "refused: unsupported")
    }

    /// The loop's thread ends while attached: the source is destroyed with the loop (its
    /// descriptor is closed), so the context, iterated afterwards on another thread, neither
    /// dispatches it (which would trap: not the loop's thread) nor polls a closed descriptor.
    @Test("the loop's end destroys its source; the context lives on", arguments: embeddableBackends)
    func loopEndDestroysSource(_ backend: BackendKind) async throws {
        let context = g_main_context_new()!
        defer { g_main_context_unref(context) }
        let reference = GLibMainContext(context)
        let attachment = try await onLoopThread(backend) { loop in
            let attachment = try loop.attach(to: reference)
            loop.perform {}
            // One iteration serves the block, with the context acquired on this thread.
            g_main_context_iteration(reference.pointer, 0)
            return attachment
        }
        #expect(attachment.isAttached == false)
        // Nothing left in the context: an iteration that may not block finds nothing to dispatch.
        #expect(g_main_context_iteration(context, 0) == 0)
        #expect(g_main_context_pending(context) == 0)
    }

    /// The loop's thread ended while attached, which ended the attachment: `detach()` afterwards
    /// does nothing, as its documentation says, on the thread that made the loop and on any
    /// other (no thread is the loop's own any more). An exit test: the defect was a trap.
    @Test("detach after the loop's thread ended does nothing, on any thread", arguments: embeddableBackends.map(\.name))
    func detachAfterLoopEnded(_ name: String) async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [name] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let backend = BackendKind(rawValue: name)!
            let context = g_main_context_new()!
            let reference = GLibMainContext(context)
            let attached = Lock<GLibAttachment?>(nil)
            let owner = try TestThread {
                attached.withLock { $0 = try? Loop.current(backend: backend).attach(to: reference) }
            }
            guard owner.join(), let attachment = attached.withLock({ $0 }) else { fatalError("no attachment") }
            guard !attachment.isAttached else { fatalError("still attached after the loop's thread ended") }
            attachment.detach()
            attachment.detach()
            let other = try TestThread { attachment.detach() }
            guard other.join(within: .seconds(20)) else { fatalError("the other thread's detach did not return") }
            guard !attachment.isAttached, g_main_context_pending(context) == 0 else {
                fatalError("the detaches changed something")
            }
            g_main_context_unref(context)
            writeToStandardError("detached quietly\n")
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.contains("detached quietly"), "\(errors)")
    }

    /// The check the fix above must keep: while the attachment lasts, a detach on another thread
    /// than the loop's traps with its message.
    @Test("detach on another thread while attached traps with its message", arguments: embeddableBackends.map(\.name))
    func detachOnAnotherThreadTraps(_ name: String) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [name] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let backend = BackendKind(rawValue: name)!
            let attached = Lock<GLibAttachment?>(nil)
            let made = Latch()
            _ = try TestThread {
                do {
                    let loop = try Loop.current(backend: backend)
                    attached.withLock { $0 = try? loop.attach(to: .default) }
                } catch {}
                made.open()
                // The loop's thread stays, attached, for the rest of the child process.
                while true { pause() }
            }
            guard made.wait(for: .seconds(20)), let attachment = attached.withLock({ $0 }), attachment.isAttached else {
                fatalError("no attached loop")
            }
            attachment.detach()
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.contains("GLibAttachment.detach() called on a thread that is not"), "\(errors)")
    }
}

/// Writes `text` to standard error, unbuffered (an exit test's child reports through it).
private func writeToStandardError(_ text: String) {
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}
