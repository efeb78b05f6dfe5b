#if GLib
internal import CGLib
import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Behaviour contract › G3: A run owns its GLib context; G4: A loop off the main thread is the
/// default context of its thread. GLib's thread rules, which GTK and GIO code relies on: the thread
/// that runs a GLib-backend loop owns its context while a run lasts (callouts included), and a
/// loop off the main thread is its thread's default context for its whole life.
extension GLibBackendTests {
    /// How long a step of these tests may take before it fails: a loaded machine is slow, a lost
    /// callback never comes.
    static let stepDeadline: Duration = .seconds(20)

    @Test(
        "Loop.main on GLib owns the default context for each whole run: g_main_context_invoke(NULL) from workers, while the main thread is in a callout and while it waits, runs every function on the main thread, one at a time"
    )
    func mainLoopOwnsDefaultContext() async throws {
        try await expectCleanRun(
            "MainLoopFixture", ["glib", "glib-invoke-ownership"], limit: .seconds(120),
            printed: [
                "owner in a timer: true", "owner in a main queue block: true", "owner after a nested run: true",
                "owner in a main actor task: true", "run: stopped", "owner after the run: false",
                "invoked: 4000 of 4000", "ran on another thread: 0", "ran without owning the context: 0",
                "ran while main-thread code ran: 0",
            ])
    }

    /// GLib's own loop under the same stress (`g_main_loop_run` on the default context, the
    /// callout a GLib timeout's): the figures RunLoopKit's must equal, side by side.
    @Test("GLib's own g_main_loop_run under the same stress: every function on the main thread, one at a time")
    func gMainLoopReference() async throws {
        try await expectCleanRun(
            "MainLoopFixture", ["epoll", "glib-invoke-ownership-reference"], limit: .seconds(120),
            printed: [
                "owner in a GLib timeout: true", "g_main_loop_run returned", "owner after the run: false",
                "invoked: 4000 of 4000", "ran on another thread: 0", "ran without owning the context: 0",
                "ran while main-thread code ran: 0",
            ])
    }

    @Test(
        "a GLib LoopThread's context is its thread's default from its creation: GIO's async callback and a worker's g_main_context_invoke land on the loop's thread"
    )
    func loopThreadIsThreadDefault() async throws {
        try await offThePool {
            let thread = try LoopThread(name: "glib-default", backend: .glib)
            defer { thread.stop() }
            let loop = thread.loop
            let trace = Trace()
            let called = Latch()
            let invoked = Latch()
            let context = Lock<GLibContext?>(nil)
            let checked = Latch()
            let performed = thread.perform {
                let own = glibContext(of: loop)
                context.withLock { $0 = own }
                let threadDefault = g_main_context_ref_thread_default()
                trace("thread default is the loop's context: \(threadDefault == own.pointer)")
                g_main_context_unref(threadDefault)
                trace("owner in a block: \(g_main_context_is_owner(own.pointer) != 0)")
                let started = GIO.queryFileInfo("/") { succeeded in
                    trace(
                        "GIO callback on the loop's thread: \(Loop.currentIfCreated === loop), succeeded: \(succeeded)")
                    called.open()
                }
                if !started { trace("GIO could not be loaded") }
                checked.open()
            }
            #expect(performed)
            #expect(checked.wait(for: Self.stepDeadline))
            #expect(called.wait(for: Self.stepDeadline), "GIO's callback never came to the loop")
            // A worker's invoke on the loop's context: queued for its owner, the loop's thread.
            let own = try #require(context.withLock { $0 })
            let worker = try TestThread {
                glibInvoke(on: own) {
                    trace("invoked on the loop's thread: \(Loop.currentIfCreated === loop)")
                    invoked.open()
                }
            }
            #expect(worker.join(within: Self.stepDeadline))
            #expect(invoked.wait(for: Self.stepDeadline))
            #expect(
                trace.all == [
                    "thread default is the loop's context: true", "owner in a block: true",
                    "GIO callback on the loop's thread: true, succeeded: true", "invoked on the loop's thread: true",
                ])
        }
    }

    /// The window of the defect: workers invoke on GLib's default context (as GTK code does with
    /// `g_main_context_invoke(NULL, …)`) while the loop serving it is busy in a callout, then while
    /// it waits and dispatches. A loop off the main thread serves the default context here (the
    /// test process's main loop is not on GLib).
    @Test(
        "stress: g_main_context_invoke(NULL) from four workers on a LoopThread serving the default context, while it is in a callout and while it waits: every function runs on the loop's thread, one at a time"
    )
    func invokeStress() async throws {
        let workers = 4
        let perWorker = scaled(500, minimum: 50)
        try await offThePool {
            let thread = try LoopThread(
                name: "glib-invoke", backend: GLibBackend.factory(context: g_main_context_default()))
            defer { thread.stop() }
            let record = InvokeRecord(total: workers * perWorker * 2, loop: thread.loop)
            let inCallout = Latch()
            let firstHalves = Latch()
            let made = AtomicInt()
            let firstHalvesCame = Latch()
            let calloutDone = Latch()
            let performed = thread.perform {
                // Busy in a callout until every worker made its first half of invokes.
                record.running.add(1, ordering: .sequentiallyConsistent)
                inCallout.open()
                if firstHalves.wait(for: Self.stepDeadline) { firstHalvesCame.open() }
                record.running.subtract(1, ordering: .sequentiallyConsistent)
                calloutDone.open()
            }
            #expect(performed)
            let data = UncheckedPointer(Unmanaged.passUnretained(record).toOpaque())
            var threads: [TestThread] = []
            for _ in 0..<workers {
                threads.append(
                    try TestThread {
                        guard inCallout.wait(for: Self.stepDeadline) else {
                            Issue.record("the main thread never entered its callout: no invoke was made")
                            return
                        }
                        for index in 0..<(perWorker * 2) {
                            g_main_context_invoke(nil, recordInvocation, data.pointer)
                            if index == perWorker - 1, made.increment() == workers { firstHalves.open() }
                        }
                    })
            }
            for thread in threads { #expect(thread.join(within: Self.stepDeadline)) }
            #expect(calloutDone.wait(for: Self.stepDeadline))
            #expect(firstHalvesCame.isOpen, "the workers' first halves were not all made during the callout")
            #expect(record.allRan.wait(for: Self.stepDeadline))
            #expect(record.ran.load(ordering: .sequentiallyConsistent) == workers * perWorker * 2)
            #expect(record.elsewhere.load(ordering: .sequentiallyConsistent) == 0)
            #expect(record.notOwner.load(ordering: .sequentiallyConsistent) == 0)
            #expect(record.overlapping.load(ordering: .sequentiallyConsistent) == 0)
            withExtendedLifetime(record) {}
        }
    }

    /// GLib's thread rules with a context shared between threads: while another thread owns the
    /// context, the loop serves its own work and none of GLib's sources; a wait that finds the
    /// context free takes it for the rest of the run (as `g_main_loop_run` does once it gets it),
    /// so it dispatches GLib's sources and owns the context in its callouts; the other thread
    /// cannot take it back while the run lasts.
    @Test(
        "a loop whose context another thread owns serves its own work meanwhile and none of GLib's; once free, a run takes the context and holds it until it ends"
    )
    func sharedContextTakenWhenFree() async throws {
        try await offThePool {
            let context = makeGLibContext()
            defer { releaseGLibContext(context) }
            let acquired = Latch()
            let release = Latch()
            let released = Latch()
            let owner = try TestThread {
                guard g_main_context_acquire(context.pointer) != 0 else {
                    Issue.record("the owner thread could not acquire the fresh context")
                    return
                }
                acquired.open()
                release.wait(for: Self.stepDeadline)
                g_main_context_release(context.pointer)
                released.open()
            }
            defer {
                release.open()
                owner.join(within: Self.stepDeadline)
            }
            #expect(acquired.wait(for: Self.stepDeadline))
            let thread = try LoopThread(name: "glib-shared", backend: GLibBackend.factory(context: context.pointer))
            defer { thread.stop() }
            let loop = thread.loop
            let trace = Trace()
            let idleRan = Latch()
            glibIdle(on: context) {
                trace("idle on the loop's thread: \(Loop.currentIfCreated === loop), owner: \(isOwner(of: context))")
                idleRan.open()
                return false
            }
            let servedWhileOwned = onLoop(thread) {
                trace("owner while another thread owns it: \(isOwner(of: context))")
            }
            #expect(servedWhileOwned)
            // Blocks are served, passes go on: GLib's idle is not dispatched meanwhile.
            let servedAgain = onLoop(thread) { trace("idle ran meanwhile: \(idleRan.isOpen)") }
            #expect(servedAgain)
            release.open()
            #expect(released.wait(for: Self.stepDeadline))
            #expect(idleRan.wait(for: Self.stepDeadline))
            let servedLater = onLoop(thread) {
                trace("owner in a later block of the run: \(isOwner(of: context))")
            }
            #expect(servedLater)
            let taken = Lock<Bool?>(nil)
            let other = try TestThread {
                let took = g_main_context_acquire(context.pointer) != 0
                if took { g_main_context_release(context.pointer) }
                taken.withLock { $0 = took }
            }
            #expect(other.join(within: Self.stepDeadline))
            trace("another thread could take it during the run: \(taken.withLock { $0 } ?? true)")
            #expect(
                trace.all == [
                    "owner while another thread owns it: false", "idle ran meanwhile: false",
                    "idle on the loop's thread: true, owner: true", "owner in a later block of the run: true",
                    "another thread could take it during the run: false",
                ])
        }
    }
}

/// Runs `block` on `thread`'s loop and waits for it, at most ``GLibBackendTests/stepDeadline``;
/// false when it did not run in time.
private func onLoop(_ thread: LoopThread, _ block: @escaping @Sendable () -> Void) -> Bool {
    let done = Latch()
    guard
        thread.perform({
            block()
            done.open()
        })
    else { return false }
    return done.wait(for: GLibBackendTests.stepDeadline)
}

/// `g_main_context_invoke(context, …)` with `body` as the function, from the calling thread.
private func glibInvoke(on context: GLibContext, _ body: @escaping @Sendable () -> Void) {
    let box = InvokedBody(body)
    box.willInvoke()
    g_main_context_invoke(context.pointer, runInvokedBody, Unmanaged.passRetained(box).toOpaque())
}

/// A function handed to `g_main_context_invoke`. libglib is not instrumented: `handedOver`
/// states, in terms the Thread Sanitizer sees, the order GLib's lock gives between the thread
/// that invokes and the one that runs the function.
private final class InvokedBody: Sendable {
    let body: @Sendable () -> Void
    private let handedOver = Atomic<Bool>(false)
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    func willInvoke() { handedOver.store(true, ordering: .releasing) }
    func run() {
        precondition(handedOver.load(ordering: .acquiring), "InvokedBody: run before it was handed to GLib")
        body()
    }
}

private let runInvokedBody: GSourceFunc = { data in
    Unmanaged<InvokedBody>.fromOpaque(data!).takeRetainedValue().run()
    return 0 // G_SOURCE_REMOVE: once.
}

private func isOwner(of context: GLibContext) -> Bool { g_main_context_is_owner(context.pointer) != 0 }

/// A pointer handed to GLib, which threads share (the record it points to is `Sendable`).
private struct UncheckedPointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
}

/// What the functions the stress's workers invoke found where they ran.
private final class InvokeRecord: Sendable {
    let total: Int
    let loop: Loop
    let ran = Atomic<Int>(0)
    /// Ran on a thread other than the loop's.
    let elsewhere = Atomic<Int>(0)
    /// Ran where the thread did not own the default context.
    let notOwner = Atomic<Int>(0)
    /// Ran while another function, or the loop's callout, was running.
    let overlapping = Atomic<Int>(0)
    let running = Atomic<Int>(0)
    let allRan = Latch()

    init(total: Int, loop: Loop) {
        self.total = total
        self.loop = loop
    }
}

private let recordInvocation: GSourceFunc = { data in
    let record = Unmanaged<InvokeRecord>.fromOpaque(data!).takeUnretainedValue()
    if record.running.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
        record.overlapping.add(1, ordering: .sequentiallyConsistent)
    }
    if Loop.currentIfCreated !== record.loop { record.elsewhere.add(1, ordering: .sequentiallyConsistent) }
    if g_main_context_is_owner(nil) == 0 { record.notOwner.add(1, ordering: .sequentiallyConsistent) }
    record.running.subtract(1, ordering: .sequentiallyConsistent)
    if record.ran.add(1, ordering: .sequentiallyConsistent).newValue == record.total { record.allRan.open() }
    return 0 // G_SOURCE_REMOVE: once.
}
#endif
