// A program whose main loop is GLib's: the main thread runs g_main_loop_run, and Loop.main,
// attached to GLib's default context, serves DispatchQueue.main, @MainActor work and
// RunLoopKit timers between GLib's own sources. It quits after a few ticks of each.
//   swift run --package-path Examples glib-main-loop
import CGio
import Dispatch
import RunLoopKit
import RunLoopKitGLib

/// GLib's loop, for the callbacks that quit it (g_main_loop_quit is safe from any thread).
struct GLibLoop: @unchecked Sendable {
    let pointer = g_main_loop_new(nil, 0)!
    func run() { g_main_loop_run(pointer) }
    func quit() { g_main_loop_quit(pointer) }
}

/// Calls `body` every `milliseconds` from GLib's loop while it returns true.
func glibTimeout(milliseconds: UInt32, _ body: @escaping () -> Bool) {
    final class Box {
        let body: () -> Bool
        init(_ body: @escaping () -> Bool) { self.body = body }
    }
    g_timeout_add_full(
        G_PRIORITY_DEFAULT, milliseconds, { Unmanaged<Box>.fromOpaque($0!).takeUnretainedValue().body() ? 1 : 0 },
        Unmanaged.passRetained(Box(body)).toOpaque(), { Unmanaged<Box>.fromOpaque($0!).release() })
}

let glib = GLibLoop()
// On the main thread: GLib dispatches Loop.main's source from the thread that iterates the
// default context, which g_main_loop_run below makes the main thread.
let attachment = try Loop.main.attach()

var glibTicks = 0
glibTimeout(milliseconds: 10) {
    glibTicks += 1
    print("GLib timeout, tick \(glibTicks)")
    return glibTicks < 3
}

DispatchQueue.main.async { print("DispatchQueue.main: a block on GLib's main loop") }

Task { @MainActor in
    try await Task.sleep(for: .milliseconds(20))
    print("@MainActor: resumed on GLib's main loop after sleeping")
}

var timerTicks = 0
Loop.main.add(
    try Loop.Timer(after: .milliseconds(15), repeating: .milliseconds(15)) { timer in
        timerTicks += 1
        print("RunLoopKit timer, tick \(timerTicks)")
        guard timerTicks == 4 else { return }
        timer.invalidate()
        glib.quit()
    }, to: .default)

glib.run()
attachment.detach()
print("GLib's loop returned; Loop.main detached")
