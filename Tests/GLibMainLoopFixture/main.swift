// A program whose main loop is GLib's: g_main_loop_run on the main thread, with Loop.main
// attached to GLib's default context. It posts work of every kind the main thread serves
// (DispatchQueue.main, a @MainActor task, a RunLoopKit timer and a pipe source, blocks from
// other threads, GLib's own timeout and idle), prints one line per event as it runs ("event
// NAME main=true|false"), quits once all came, and exits 0; exits 1 if they did not all come.
// The GLib adapter tests run it as a child: the test runner's main thread is not theirs.
import CGLib
import Dispatch
import Glibc
import RunLoopKit
import RunLoopKitGLib

let mainThread = pthread_self()
let blocksPerThread = 50
let threads = 3
let expected = 6 + threads * blocksPerThread
let mainLoop = g_main_loop_new(nil, 0)!

/// Counts the events and prints each as it runs; quits GLib's loop once all came.
final class Events: Sendable {
    private let count = Lock(0)
    private let quit: @Sendable () -> Void
    init(quit: @escaping @Sendable () -> Void) { self.quit = quit }

    func record(_ name: String) {
        print("event \(name) main=\(pthread_equal(pthread_self(), mainThread) != 0)")
        if count.withLock({ count in
            count += 1
            return count == expected
        }) {
            quit()
        }
    }
}

struct MainLoopPointer: @unchecked Sendable { let pointer: OpaquePointer }
let quitter = MainLoopPointer(pointer: mainLoop)
let events = Events { g_main_loop_quit(quitter.pointer) }

let attachment = try Loop.main.attach()

DispatchQueue.main.async { events.record("dispatch-main") }
Task { @MainActor in events.record("main-actor-task") }
let due = ContinuousClock.now + .milliseconds(5)
Loop.main.add(
    try Loop.Timer(fireAt: due) { _ in events.record(ContinuousClock.now >= due ? "loop-timer" : "loop-timer-early") },
    to: .default)
var descriptors: [Int32] = [0, 0]
guard pipe(&descriptors) == 0 else { fatalError("pipe: \(errno)") }
let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
let pipeSource = try Loop.Source(fileDescriptor: readEnd) { _ in
    var byte: UInt8 = 0
    if read(readEnd, &byte, 1) == 1 { events.record("pipe") }
}
Loop.main.add(pipeSource, to: .default)

/// A closure handed to a C callback. `@Sendable`, so that it is not main-actor isolated (as
/// closures written in this file's top-level code are): the threads' bodies run elsewhere.
final class Callback: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
func glibOnce(_ add: (GSourceFunc, gpointer) -> Void, _ body: @escaping @Sendable () -> Void) {
    add(
        { data in
            Unmanaged<Callback>.fromOpaque(data!).takeRetainedValue().body()
            return 0
        }, Unmanaged.passRetained(Callback(body)).toOpaque())
}
glibOnce({ g_timeout_add(3, $0, $1) }) { events.record("glib-timeout") }
glibOnce({ g_idle_add($0, $1) }) { events.record("glib-idle") }
// A guard: the events did not all come in time.
glibOnce({ g_timeout_add(60_000, $0, $1) }) {
    print("timed out")
    exit(1)
}

/// Starts a detached thread running `body` (a function, so that the C entry point is not
/// main-actor isolated as a closure in top-level code is).
func startThread(_ body: @escaping @Sendable () -> Void) {
    var handle = pthread_t()
    let start = Unmanaged.passRetained(Callback(body)).toOpaque()
    let created = pthread_create(
        &handle, nil,
        { data in
            Unmanaged<Callback>.fromOpaque(data!).takeRetainedValue().body()
            return nil
        }, start)
    guard created == 0 else { fatalError("pthread_create: \(created)") }
    pthread_detach(handle)
}

for thread in 0..<threads {
    startThread {
        for index in 0..<blocksPerThread { Loop.main.perform { events.record("block-\(thread)-\(index)") } }
        var byte: UInt8 = 1
        if thread == 0 { _ = write(writeEnd, &byte, 1) }
    }
}

g_main_loop_run(mainLoop)
pipeSource.invalidate()
attachment.detach()
g_main_loop_unref(mainLoop)
print("done")
