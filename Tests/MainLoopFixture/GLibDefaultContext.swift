#if GLib
internal import CGLib
import Dispatch
import Glibc
import RunLoopKit
import Synchronization

/// A Swift closure as a one-shot GLib callback (it returns `G_SOURCE_REMOVE`).
private final class OneShot {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

private let runOnce: GSourceFunc = { data in
    Unmanaged<OneShot>.fromOpaque(data!).takeRetainedValue().body()
    return 0
}

/// `g_idle_add` on GLib's default context.
func addGLibIdle(_ body: @escaping () -> Void) {
    g_idle_add(runOnce, Unmanaged.passRetained(OneShot(body)).toOpaque())
}

/// `g_timeout_add` on GLib's default context.
func addGLibTimeout(milliseconds: UInt32, _ body: @escaping () -> Void) {
    g_timeout_add(milliseconds, runOnce, Unmanaged.passRetained(OneShot(body)).toOpaque())
}

/// Runs a `GMainLoop` on GLib's default context, nested in the caller (a modal dialog's shape),
/// until `quit` is called (from any thread) or `guardMilliseconds` pass; returns whether the guard
/// had to quit it.
func runNestedDefaultLoop(guardMilliseconds: UInt32, _ setup: (_ quit: @escaping @Sendable () -> Void) -> Void) -> Bool
{
    let nested = NestedMainLoop(g_main_loop_new(nil, 0)!)
    let guarded = Atomic<Bool>(false)
    setup { g_main_loop_quit(nested.pointer) }
    addGLibTimeout(milliseconds: guardMilliseconds) {
        guarded.store(true, ordering: .relaxed)
        g_main_loop_quit(nested.pointer)
    }
    g_main_loop_run(nested.pointer)
    g_main_loop_unref(nested.pointer)
    return guarded.load(ordering: .relaxed)
}

/// A `GMainLoop *`: `g_main_loop_quit` is safe from any thread.
private struct NestedMainLoop: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// What the functions that worker threads hand to `g_main_context_invoke(NULL, …)` found where
/// they ran. Made before the workers start and kept until the scenario ends; functions reach it
/// through their data pointer.
private final class InvokeRecord: Sendable {
    let mainThread: pthread_t
    let total: Int
    /// Called by the last function: stops the main thread's loop.
    let finish: @Sendable () -> Void
    /// Functions that ran.
    let ran = Atomic<Int>(0)
    /// Functions that ran on a thread other than the main thread (the context's owner).
    let elsewhere = Atomic<Int>(0)
    /// Functions that ran where `g_main_context_is_owner(NULL)` was false.
    let notOwner = Atomic<Int>(0)
    /// Functions that ran while another function, or the main thread's callout, was running.
    let overlapping = Atomic<Int>(0)
    /// Functions running now, plus one while the main thread is in the stress's callout.
    let running = Atomic<Int>(0)

    init(total: Int, finish: @escaping @Sendable () -> Void) {
        mainThread = pthread_self()
        self.total = total
        self.finish = finish
    }

    /// The scenario's figures, one line each.
    var lines: [String] {
        [
            "invoked: \(ran.load(ordering: .sequentiallyConsistent)) of \(total)",
            "ran on another thread: \(elsewhere.load(ordering: .sequentiallyConsistent))",
            "ran without owning the context: \(notOwner.load(ordering: .sequentiallyConsistent))",
            "ran while main-thread code ran: \(overlapping.load(ordering: .sequentiallyConsistent))",
        ]
    }
}

/// The function workers invoke: records where it runs; the last one stops the loop.
private let recordInvocation: GSourceFunc = { data in
    let record = Unmanaged<InvokeRecord>.fromOpaque(data!).takeUnretainedValue()
    if record.running.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
        record.overlapping.add(1, ordering: .sequentiallyConsistent)
    }
    if pthread_equal(pthread_self(), record.mainThread) == 0 {
        record.elsewhere.add(1, ordering: .sequentiallyConsistent)
    }
    if g_main_context_is_owner(nil) == 0 { record.notOwner.add(1, ordering: .sequentiallyConsistent) }
    record.running.subtract(1, ordering: .sequentiallyConsistent)
    if record.ran.add(1, ordering: .sequentiallyConsistent).newValue == record.total { record.finish() }
    return 0 // G_SOURCE_REMOVE: once.
}

/// Whether the main thread owns GLib's default context here.
private var ownsDefaultContext: Bool { g_main_context_is_owner(nil) != 0 }

/// Loop.main on GLib owns the default context for the whole of each run, inside its callouts
/// (a timer, a main-queue block, a nested run, a `@MainActor` task) too, and releases it when
/// the run ends; so `g_main_context_invoke(NULL, f, …)` from worker threads — made while the
/// main thread is busy in a callout, then while the loop waits and dispatches — runs every `f`
/// on the main thread, one at a time, never on the worker. A chain: each step is caused by the
/// one before.
func invokeOwnershipScenario(_ loop: Loop, trace: @escaping @Sendable (String) -> Void) throws {
    let record = InvokeRecord(total: invokeWorkers * invokesPerWorker * 2, finish: { loop.stop() })
    let keepAlive = try Loop.Timer(after: .seconds(60)) { _ in }
    loop.add(keepAlive, to: .default)
    defer { keepAlive.invalidate() }
    let first = try Loop.Timer(after: .milliseconds(1)) { _ in
        trace("owner in a timer: \(ownsDefaultContext)")
        DispatchQueue.main.async {
            trace("owner in a main queue block: \(ownsDefaultContext)")
            loop.run(.default, timeout: .zero)
            trace("owner after a nested run: \(ownsDefaultContext)")
            Task { @MainActor in
                trace("owner in a main actor task: \(ownsDefaultContext)")
                loop.add(
                    try! Loop.Timer(after: .milliseconds(1)) { _ in invokeStress(record, trace: trace) }, to: .default)
            }
        }
    }
    loop.add(first, to: .default)
    trace("run: \(loop.run(timeout: .seconds(60)))")
    trace("owner after the run: \(ownsDefaultContext)")
    for line in record.lines { trace(line) }
}

/// GLib's own figures for the same stress, to set beside RunLoopKit's: the main thread runs
/// `g_main_loop_run` on the default context (RunLoopKit's main loop, on another backend, is not
/// involved), and the stress's callout is a GLib timeout's callback.
func invokeOwnershipReference(trace: @escaping @Sendable (String) -> Void) {
    let mainLoop = NestedMainLoop(g_main_loop_new(nil, 0)!)
    let record = InvokeRecord(
        total: invokeWorkers * invokesPerWorker * 2, finish: { g_main_loop_quit(mainLoop.pointer) })
    addGLibTimeout(milliseconds: 1) {
        trace("owner in a GLib timeout: \(ownsDefaultContext)")
        invokeStress(record, trace: trace)
    }
    let guarded = Atomic<Bool>(false)
    addGLibTimeout(milliseconds: 60_000) {
        guarded.store(true, ordering: .relaxed)
        g_main_loop_quit(mainLoop.pointer)
    }
    g_main_loop_run(mainLoop.pointer)
    g_main_loop_unref(mainLoop.pointer)
    trace("g_main_loop_run returned\(guarded.load(ordering: .relaxed) ? " after 60 s" : "")")
    trace("owner after the run: \(ownsDefaultContext)")
    for line in record.lines { trace(line) }
}

private let invokeWorkers = 4
private let invokesPerWorker = 500

/// The stress, called in a callout on the main thread: it waits there until every worker made
/// its first half of invokes, so those are all made while the main thread is busy in the
/// callout; the second half races the loop's waits and dispatches.
private func invokeStress(_ record: InvokeRecord, trace: @escaping @Sendable (String) -> Void) {
    let firstHalves = DispatchSemaphore(value: 0)
    record.running.add(1, ordering: .sequentiallyConsistent)
    for _ in 0..<invokeWorkers {
        let thread = try! PThread.spawn {
            let data = Unmanaged.passUnretained(record).toOpaque()
            for index in 0..<(invokesPerWorker * 2) {
                g_main_context_invoke(nil, recordInvocation, data)
                if index == invokesPerWorker - 1 { firstHalves.signal() }
            }
        }
        thread.detach()
    }
    for _ in 0..<invokeWorkers where firstHalves.wait(timeout: .now() + .seconds(20)) != .success {
        trace("a worker did not make its invokes within 20 s")
    }
    record.running.subtract(1, ordering: .sequentiallyConsistent)
}
#endif
