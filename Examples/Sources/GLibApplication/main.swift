// The shape of a GTK program's main, with GIO's GApplication (no display needed): the
// "activate" handler attaches Loop.main to GLib's default context, which g_application_run
// iterates on the main thread, so @MainActor code, DispatchQueue.main and RunLoopKit timers
// run there. Replace g_application_new by gtk_application_new and add your windows: the rest
// stays. The application holds itself while its work runs and releases itself when done, so
// g_application_run returns.
//   swift run --package-path Examples glib-application
import CGio
import Dispatch
import Glibc
import RunLoopKit
import RunLoopKitGLib

/// The application, for the code that releases it (on the main thread).
struct Application: @unchecked Sendable {
    let pointer: OpaquePointer

    init(id: String) {
        // NON_UNIQUE: no D-Bus registration, so that it runs without a session bus.
        pointer = OpaquePointer(g_application_new(id, G_APPLICATION_NON_UNIQUE))
    }

    init(pointer: OpaquePointer) {
        self.pointer = pointer
    }

    var gApplication: UnsafeMutablePointer<GApplication> { UnsafeMutablePointer(pointer) }
}

/// The work the window would do: a main-actor model updated from a background task and a timer.
@MainActor
final class Model {
    private(set) var log: [String] = []
    func note(_ line: String) {
        log.append(line)
        print(line)
    }
}

@MainActor
func activated(_ application: Application) {
    // Keeps g_application_run going until the work below releases it.
    g_application_hold(application.gApplication)
    let attachment: GLibAttachment
    do {
        attachment = try Loop.main.attach()
    } catch {
        print("could not attach Loop.main: \(error)")
        g_application_release(application.gApplication)
        return
    }
    let model = Model()
    model.note("activate: Loop.main attached to GLib's default context")
    DispatchQueue.main.async { model.note("DispatchQueue.main: served by g_application_run") }
    Loop.main.add(
        try! Loop.Timer(after: .milliseconds(10)) { _ in model.note("RunLoopKit timer: on the main thread") },
        to: .default)
    Task { @MainActor in
        // Work off the main thread; the result comes back to the main actor, served by GLib.
        let answer = await Task.detached { (1...9).reduce(0, +) }.value
        model.note("@MainActor: the background work answered \(answer)")
        try await Task.sleep(for: .milliseconds(30))
        model.note("done: detaching and releasing the application")
        attachment.detach()
        g_application_release(application.gApplication)
    }
}

let application = Application(id: "org.runloopkit.GLibApplication")
let activate: @convention(c) (UnsafeMutablePointer<GApplication>?, gpointer?) -> Void = { _, data in
    let application = Application(pointer: OpaquePointer(data!))
    // GLib emits "activate" on the thread that runs g_application_run: the main thread.
    MainActor.assumeIsolated { activated(application) }
}
g_signal_connect_data(
    application.gApplication, "activate", unsafeBitCast(activate, to: GCallback.self),
    UnsafeMutableRawPointer(application.pointer), nil, GConnectFlags(rawValue: 0))
let status = g_application_run(application.gApplication, 0, nil)
g_object_unref(application.gApplication)
print("g_application_run returned \(status)")
exit(status)
