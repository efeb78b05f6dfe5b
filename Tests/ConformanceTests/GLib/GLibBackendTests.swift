#if GLib
import Glibc
import RunLoopKit
import TestSupport
import Testing

/// The GLib backend's own promises, beyond the conformance suite every backend passes: GLib's
/// sources on the loop's context are served by RunLoopKit runs, interleaved with RunLoopKit's
/// timers and sources, outside the wait (`Backend.dispatchOwnSources`, the pass phase
/// `backendSources`), re-entrantly; GLib's wake-up wakes the loop; RunLoopKit's timers keep their
/// instants (T8).
///
/// Each scenario is a chain: every step is caused by the one before, so the trace's order is
/// the only one possible. A timer far away keeps the mode from being empty (a mode with only
/// GLib's sources is empty, and a run returns at once).
@Suite(
    "GLib backend", .serialized,
    .enabled(if: backends.contains(.glib), "GLib cannot start here: see Backend availability"))
struct GLibBackendTests {
    @Test(
        "GLib timeouts, idle callbacks and fd watches on the loop's context run in its runs, in turn with its timers and sources, outside the wait"
    )
    func interleaved() async throws {
        let glibPipe = try Pipe()
        let loopPipe = try Pipe()
        defer {
            glibPipe.close()
            loopPipe.close()
        }
        let trace = try await tracedGLibLoop { loop, context, trace in
            let source = try Loop.Source(fileDescriptor: loopPipe.readEnd) { _ in
                trace("loop source")
                loopPipe.drain()
                loop.stop()
            }
            loop.add(source, to: .default)
            defer { source.invalidate() }
            glibIdle(on: context) {
                trace("glib idle waiting=\(loop.isWaiting)")
                let timer = try! Loop.Timer(after: .milliseconds(1)) { _ in
                    trace("loop timer")
                    glibPipe.fill()
                }
                loop.add(timer, to: .default)
                return false
            }
            glibReadableWatch(on: context, descriptor: glibPipe.readEnd) {
                trace("glib fd watch waiting=\(loop.isWaiting)")
                glibPipe.drain()
                glibTimeout(on: context, milliseconds: 1) {
                    trace("glib timeout waiting=\(loop.isWaiting)")
                    loopPipe.fill()
                    return false
                }
                return false
            }
            trace("run \(loop.run(.default, timeout: generousDeadline))")
        }
        #expect(
            trace == [
                "glib idle waiting=false", "loop timer", "glib fd watch waiting=false", "glib timeout waiting=false",
                "loop source", "run stopped",
            ])
    }

    @Test(
        "a GLib callback runs the loop nested: the nested run serves RunLoopKit's timers and GLib's sources, and the outer run goes on"
    )
    func nestedRun() async throws {
        let trace = try await tracedGLibLoop { loop, context, trace in
            glibTimeout(on: context, milliseconds: 1) {
                trace("outer glib timeout begins")
                let timer = try! Loop.Timer(after: .milliseconds(1)) { _ in
                    trace("nested: loop timer")
                    glibIdle(on: context) {
                        trace("nested: glib idle")
                        loop.stop()
                        return false
                    }
                }
                loop.add(timer, to: .default)
                trace("nested run \(loop.run(.default, timeout: generousDeadline))")
                let after = try! Loop.Timer(after: .milliseconds(1)) { _ in
                    trace("outer: loop timer")
                    loop.stop()
                }
                loop.add(after, to: .default)
                trace("outer glib timeout ends")
                return false
            }
            trace("run \(loop.run(.default, timeout: generousDeadline))")
        }
        #expect(
            trace == [
                "outer glib timeout begins", "nested: loop timer", "nested: glib idle", "nested run stopped",
                "outer glib timeout ends", "outer: loop timer", "run stopped",
            ])
    }

    @Test("a GLib callback runs a nested GMainLoop on the same context, which quits itself; the loop goes on")
    func nestedGLibLoop() async throws {
        let trace = try await tracedGLibLoop { loop, context, trace in
            glibIdle(on: context) {
                trace("glib idle begins")
                runNestedGLibLoop(on: context) { quit in
                    glibTimeout(on: context, milliseconds: 1) {
                        trace("nested GLib loop: timeout")
                        glibIdle(on: context) {
                            trace("nested GLib loop: idle, quits")
                            quit()
                            return false
                        }
                        return false
                    }
                }
                trace("glib idle ends")
                let timer = try! Loop.Timer(after: .milliseconds(1)) { _ in
                    trace("loop timer")
                    glibIdle(on: context) {
                        trace("glib idle after")
                        loop.stop()
                        return false
                    }
                }
                loop.add(timer, to: .default)
                return false
            }
            trace("run \(loop.run(.default, timeout: generousDeadline))")
        }
        #expect(
            trace == [
                "glib idle begins", "nested GLib loop: timeout", "nested GLib loop: idle, quits", "glib idle ends",
                "loop timer", "glib idle after", "run stopped",
            ])
    }

    @Test(
        "g_main_context_wakeup from another thread ends the loop's sleep, and a GLib source attached from another thread runs"
    )
    func wakeFromAnotherThread() async throws {
        let result = try await tracedGLibLoop { loop, context, trace in
            // The first sleep ends with GLib's wake-up alone: an observer after the wait stops the run.
            let observer = Loop.Observer(activities: .afterWaiting, repeats: false) { _, _ in
                trace("woken")
                loop.stop()
            }
            loop.add(observer, to: .default)
            _ = try TestThread {
                guard waitUntil({ loop.isWaiting }) else { return trace("never slept") }
                glibWakeUp(context)
            }
            trace("run \(loop.run(.default, timeout: generousDeadline))")
            // Then an idle source attached from another thread while the loop sleeps.
            _ = try TestThread {
                guard waitUntil({ loop.isWaiting }) else { return trace("never slept") }
                glibIdle(on: context) {
                    trace("idle on loop thread")
                    loop.stop()
                    return false
                }
            }
            trace("run \(loop.run(.default, timeout: generousDeadline))")
        }
        #expect(result == ["woken", "run stopped", "idle on loop thread", "run stopped"])
    }

    @Test(
        "RunLoopKit timers on the GLib backend never fire before their instant, while GLib's millisecond timeouts run")
    func timersNotEarly() async throws {
        let early = try await onLoopThread(.glib) { loop -> [String] in
            let early = Trace()
            let context = glibContext(of: loop)
            var glibRuns = 0
            glibTimeout(on: context, milliseconds: 1) {
                glibRuns += 1
                return true
            }
            // Instants that a millisecond's rounding would miss, either way.
            let fired = Trace()
            for offset in [1, 150, 999, 1_001, 2_500].map(Duration.microseconds) {
                let due = ContinuousClock.now + offset + .nanoseconds(1)
                let timer = try Loop.Timer(fireAt: due) { _ in
                    let now = ContinuousClock.now
                    fired("\(offset)")
                    if now < due { early("\(offset) fired \(due - now) early") }
                }
                loop.add(timer, to: .default)
                // The timer is the mode's only item: the run finishes once it fired.
                let result = loop.run(.default, timeout: generousDeadline)
                if result != .finished { early("the run for \(offset) ended \(result)") }
            }
            if fired.count != 5 { early("only \(fired.all) fired") }
            if glibRuns == 0 { early("GLib's timeout never ran") }
            return early.all
        }
        #expect(early == [])
    }

    @Test("Loop.main on GLib serves GLib's default context with DispatchQueue.main and @MainActor, on the main thread")
    func mainLoopServesDefaultContext() async throws {
        #expect(
            try await runMainLoopFixture(.glib, "glib-default-context") == [
                "glib idle, main thread", "main queue block, main thread", "glib timeout, main thread",
                "main actor task, main thread", "run: stopped",
            ])
    }

    @Test(
        "stress: GLib sources attached from four threads while the loop sleeps and wakes, with perform and wakeUp: each runs once, none lost"
    )
    func crossThreadStress() async throws {
        let perThread = scaled(2_000, minimum: 50)
        let threads = 4
        let (idles, performs) = try await onLoopThread(.glib) { loop -> (Int, Int) in
            let context = glibContext(of: loop)
            let idles = AtomicInt()
            let performs = AtomicInt()
            let keepAlive = try Loop.Timer(after: generousDeadline) { _ in }
            loop.add(keepAlive, to: .default)
            defer { keepAlive.invalidate() }
            let total = threads * perThread
            @Sendable func finishIfDone() {
                if idles.value == total, performs.value == total { loop.stop() }
            }
            for thread in 0..<threads {
                _ = try TestThread {
                    for index in 0..<perThread {
                        // Aimed at the wake's window: sources attached, GLib wake-ups and
                        // RunLoopKit wakes from other threads while the loop goes to sleep.
                        glibIdle(on: context) {
                            _ = idles.increment()
                            finishIfDone()
                            return false
                        }
                        loop.perform {
                            _ = performs.increment()
                            finishIfDone()
                        }
                        if index.isMultiple(of: 3) { glibWakeUp(context) }
                        if (index + thread).isMultiple(of: 5) { loop.wakeUp() }
                        if index.isMultiple(of: 64) { sched_yield() }
                    }
                }
            }
            let result = loop.run(.default, timeout: generousDeadline)
            #expect(result == .stopped)
            return (idles.value, performs.value)
        }
        #expect(idles == threads * perThread)
        #expect(performs == threads * perThread)
    }

    @Test(
        "a LoopThread on a context the user gives (GLibBackend.factory(context:)) serves GLib sources attached to it from another thread"
    )
    func givenContext() async throws {
        try await offThePool {
            let context = makeGLibContext()
            defer { releaseGLibContext(context) }
            let thread = try LoopThread(name: "glib-given", backend: GLibBackend.factory(context: context.pointer))
            defer { thread.stop() }
            let ran = Latch()
            let ranOnLoop = Lock<Bool?>(nil)
            glibIdle(on: context) {
                ranOnLoop.withLock { $0 = Loop.currentIfCreated === thread.loop }
                ran.open()
                return false
            }
            #expect(ran.wait(for: generousDeadline))
            #expect(ranOnLoop.withLock { $0 } == true)
            let same = Lock<Bool?>(nil)
            #expect(
                thread.perform(waitUntilDone: true) {
                    same.withLock { $0 = glibContext(of: thread.loop).pointer == context.pointer }
                })
            #expect(same.withLock { $0 } == true)
        }
    }

    @Test("a third-party backend named glib is a kind of its own, not RunLoopKit's glib")
    func thirdPartyNamedGLib() async throws {
        let thirdParty = BackendKind(name: "glib")
        #expect(thirdParty != BackendKind.glib)
        #expect(thirdParty.name == BackendKind.glib.name)
        #expect(!thirdParty.isBuiltIn && BackendKind.glib.isBuiltIn)
        #expect(BackendKind(rawValue: "glib") == .glib)
        #expect(Set([thirdParty, .glib]).count == 2)
        // A third-party backend that was named glib before RunLoopKit had one, written as such code
        // was: it wraps the build's default backend.
        let factory = BackendFactory(kind: thirdParty) {
            ForwardingBackend(try BackendKind.default.factory.make(), kind: thirdParty)
        }
        let (kind, mismatch) = try await offThePool { () -> (BackendKind, String) in
            let loop = try Loop.current(creatingWith: factory)
            do {
                _ = try Loop.current(backend: BackendKind.glib)
                return (loop.backend, "no error")
            } catch {
                return (loop.backend, "\(error)")
            }
        }
        #expect(kind == thirdParty && kind != .glib)
        #expect(
            mismatch == "this thread already has a glib (third-party) loop; cannot make it a glib (RunLoopKit's) loop")
        let reverse = try await offThePool { () -> String in
            _ = try Loop.current(backend: .glib)
            do {
                _ = try Loop.current(creatingWith: factory)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(
            reverse == "this thread already has a glib (RunLoopKit's) loop; cannot make it a glib (third-party) loop")
    }
}

#endif
