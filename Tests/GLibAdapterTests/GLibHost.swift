import CGLib
import RunLoopKit
import RunLoopKitGLib
import TestSupport
import Testing

/// A GLib main context of its own and a `GMainLoop` on it, made and used on one thread (the
/// test's loop thread), which it pushes as that thread's default context.
///
/// `@unchecked Sendable` so that the loop's callbacks (`@Sendable` closures that run on the same
/// thread) can add GLib sources: it is used on its own thread only, except ``quitter``.
final class GLibHost: @unchecked Sendable {
    let context: OpaquePointer
    let mainLoop: OpaquePointer

    init() {
        context = g_main_context_new()
        g_main_context_push_thread_default(context)
        mainLoop = g_main_loop_new(context, 0)
    }

    deinit {
        g_main_loop_unref(mainLoop)
        g_main_context_pop_thread_default(context)
        g_main_context_unref(context)
    }

    /// The context as the adapter takes it.
    var reference: GLibMainContext { GLibMainContext(context) }

    /// A handle another thread may use to quit the GMainLoop (g_main_loop_quit is thread-safe).
    var quitter: Quitter { Quitter(mainLoop: mainLoop) }

    /// Attaches `source` to the context with `body` as its callback (kept while the source is),
    /// and drops the caller's reference; returns the source's id.
    @discardableResult
    func add(_ source: UnsafeMutablePointer<GSource>, priority: Int32 = 0, _ body: @escaping () -> Bool) -> guint {
        let callback = Unmanaged.passRetained(Callback(body)).toOpaque()
        g_source_set_callback(source, runCallback, callback, releaseCallback)
        g_source_set_priority(source, priority)
        let id = g_source_attach(source, context)
        g_source_unref(source)
        return id
    }

    /// A GLib timeout after `milliseconds` that repeats while `body` returns true.
    @discardableResult
    func timeout(milliseconds: UInt32, _ body: @escaping () -> Bool) -> guint {
        add(g_timeout_source_new(milliseconds), body)
    }

    /// A GLib idle callback (G_PRIORITY_DEFAULT_IDLE) that repeats while `body` returns true.
    @discardableResult
    func idle(_ body: @escaping () -> Bool) -> guint {
        add(g_idle_source_new(), priority: 200, body)
    }

    /// Runs the GMainLoop until something quits it; a guard quits it after `limit`, recording an
    /// issue. Returns false when the guard had to.
    @discardableResult
    func run(within limit: Duration = hostDeadline, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        var timedOut = false
        let milliseconds = UInt32(limit.components.seconds * 1000)
        let guardSource = g_timeout_source_new(milliseconds)!
        add(g_source_ref(guardSource)) { [mainLoop] in
            timedOut = true
            g_main_loop_quit(mainLoop)
            return false
        }
        g_main_loop_run(mainLoop)
        g_source_destroy(guardSource)
        g_source_unref(guardSource)
        if timedOut { Issue.record("the GMainLoop was not quit within \(limit)", sourceLocation: sourceLocation) }
        return !timedOut
    }

    /// Runs the GMainLoop until `done` is true, checked after each GLib iteration (an idle of
    /// low priority quits once it is).
    func run(until done: @escaping () -> Bool, quitter: Quitter, sourceLocation: SourceLocation = #_sourceLocation) {
        let check = g_timeout_source_new(1)!
        add(g_source_ref(check), priority: 300) {
            if done() { quitter.quit() }
            return true
        }
        run(sourceLocation: sourceLocation)
        g_source_destroy(check)
        g_source_unref(check)
    }

    /// Iterates the context (blocking) until `done` is true; returns how many iterations it took.
    /// A guard ends it after `limit`, recording an issue.
    func iterations(
        until done: () -> Bool, within limit: Duration = hostDeadline, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        var timedOut = false
        let guardSource = g_timeout_source_new(UInt32(limit.components.seconds * 1000))!
        add(g_source_ref(guardSource)) {
            timedOut = true
            return false
        }
        var count = 0
        while !done() && !timedOut {
            g_main_context_iteration(context, 1)
            count += 1
        }
        g_source_destroy(guardSource)
        g_source_unref(guardSource)
        if timedOut { Issue.record("the awaited event did not come within \(limit)", sourceLocation: sourceLocation) }
        return count
    }

    /// Quits a GMainLoop from any thread.
    struct Quitter: @unchecked Sendable {
        let mainLoop: OpaquePointer
        func quit() { g_main_loop_quit(mainLoop) }
    }
}

private final class Callback {
    let body: () -> Bool
    init(_ body: @escaping () -> Bool) { self.body = body }
}

private func runCallback(_ data: gpointer?) -> gboolean {
    Unmanaged<Callback>.fromOpaque(data!).takeUnretainedValue().body() ? 1 : 0
}

private func releaseCallback(_ data: gpointer?) {
    Unmanaged<Callback>.fromOpaque(data!).release()
}
