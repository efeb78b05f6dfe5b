#if GLib
import Glibc
import RunLoopKit
import TestSupport
import Testing

extension GLibBackendTests {
    /// A modal nested GLib loop (a GTK 3 dialog's `gtk_dialog_run`, a synchronous helper) run
    /// from a GLib callback iterates the context outside the loop's own wait: the loop's work
    /// in the interrupted run's mode goes on there — a timer, a block posted from another
    /// thread, a descriptor source — before the nested loop quits; a guard quits it after
    /// seconds otherwise.
    @Test("a nested GMainLoop run from a GLib callback serves the run's timers, blocks and sources")
    func nestedGLibLoopServesLoopWork() async throws {
        let trace = try await tracedGLibLoop { loop, context, trace in
            let pipe = try Pipe()
            defer { pipe.close() }
            glibIdle(on: context) {
                trace("glib idle begins")
                runNestedGLibLoop(on: context) { quitNested in
                    let quit = NestedLoopQuit(quitNested)
                    let seen = Lock(0)
                    @Sendable func step(_ event: String) {
                        trace("nested: \(event)")
                        if seen.withLock({
                            $0 += 1; return $0
                        }) == 3 {
                            quit.quit()
                        }
                    }
                    // Each step causes the next: a timer due in the nested loop posts a block from
                    // another thread, which makes a descriptor source's pipe readable.
                    let source = try! Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                        _ = pipe.drain()
                        step("descriptor source")
                    }
                    loop.add(source, to: .default)
                    let timer = try! Loop.Timer(after: .milliseconds(20)) { _ in
                        step("loop timer")
                        _ = try! TestThread {
                            loop.perform {
                                step("block from another thread")
                                pipe.fill()
                            }
                        }
                    }
                    loop.add(timer, to: .default)
                    glibTimeout(on: context, milliseconds: 5_000) {
                        trace("nested: guard quits")
                        quit.quit()
                        return false
                    }
                }
                trace("glib idle ends")
                loop.stop()
                return false
            }
            trace("run \(loop.run(.default, timeout: generousDeadline))")
        }
        #expect(
            trace == [
                "glib idle begins", "nested: loop timer", "nested: block from another thread",
                "nested: descriptor source", "glib idle ends", "run stopped",
            ])
    }

    /// On `Loop.main`, a nested GLib loop on the default context serves `DispatchQueue.main` and
    /// `@MainActor` work (in a child process: the main thread's loop).
    @Test("Loop.main on GLib: a nested GMainLoop serves DispatchQueue.main and @MainActor work")
    func nestedGLibLoopServesMainQueue() async throws {
        #expect(
            try await runMainLoopFixture(.glib, "glib-nested-main-queue") == [
                "glib idle", "main queue block in the nested loop", "main actor task in the nested loop",
                "nested loop returned, guard: false", "run: stopped",
            ])
    }
}

/// `g_main_loop_quit` (safe from any thread) for the loop's `@Sendable` callbacks, which run on
/// the nested GLib loop's thread.
private struct NestedLoopQuit: @unchecked Sendable {
    let quit: () -> Void
    init(_ quit: @escaping () -> Void) { self.quit = quit }
}
#endif
