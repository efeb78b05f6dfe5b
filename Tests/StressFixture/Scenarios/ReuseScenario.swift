import Glibc
import RunLoopKit
import TestSupport

/// The descriptor-reuse scenarios (see the Faults tests in ConformanceTests).
enum ReuseScenario {
    /// Pipe A is watched; its read end's number is reused for pipe B's read end; a new source
    /// watches that number (now B) and B gets data.
    static func newSourceOnReusedNumber(_ backend: BackendKind) throws {
        try onOwnThread(backend) { loop in
            let (kernel, old, new, oldSource, oldCalls) = try watchOldPipe(on: loop)
            // A pass (a poll) registers the old source in the backend.
            _ = loop.run(timeout: .zero)

            reuse(old.readEnd, for: new.readEnd)
            let newCalls = AtomicInt()
            let newSource = try Loop.Source(fileDescriptor: old.readEnd) { _ in
                drainDescriptor(old.readEnd)
                newCalls.increment()
            }
            loop.add(newSource, to: .default)
            new.fill()
            check(runUntil(loop) { newCalls.value > 0 }, "the new source never heard its data")
            expectLoopStillServes(loop)
            check(oldCalls.value == 0, "the old handler was called \(oldCalls.value) times for the new file")
            check(!oldSource.isValid, "the old source was not invalidated")
            newSource.invalidate()
            oldSource.invalidate()
            checkReleased(loop, kernel, closing: old, new)
        }
    }

    /// Pipe A is watched; its number is reused for pipe B (with data) and nothing else
    /// changes: the old handler never hears B. A run in another mode and back makes the loop
    /// register its descriptors again, and that is where it must notice.
    static func reusedBehindRegisteredSource(_ backend: BackendKind) throws {
        try onOwnThread(backend) { loop in
            let (kernel, old, new, oldSource, oldCalls) = try watchOldPipe(on: loop)
            let ticks = AtomicInt()
            let ticker = try Loop.Timer(after: .zero, repeating: .milliseconds(1)) { _ in ticks.increment() }
            loop.add(ticker, to: .default)
            check(runUntil(loop) { ticks.value >= 2 }, "the timer never fired")

            reuse(old.readEnd, for: new.readEnd)
            new.fill()
            // Several passes with the reused number ready.
            let reached = ticks.value + 5
            check(runUntil(loop) { ticks.value >= reached }, "the timer stopped firing")
            check(oldCalls.value == 0, "the old handler heard the new file")

            // Another mode and back: the loop stops watching the default mode's descriptors
            // and watches them again.
            loop.add(Loop.Source {}, to: "elsewhere")
            _ = loop.run("elsewhere", timeout: .zero)
            let later = ticks.value + 5
            check(runUntil(loop) { ticks.value >= later }, "the timer stopped firing")
            check(oldCalls.value == 0, "the old handler heard the new file")
            check(!oldSource.isValid, "the old source was not invalidated")
            expectLoopStillServes(loop)
            ticker.invalidate()
            oldSource.invalidate()
            checkReleased(loop, kernel, closing: old, new)
        }
    }

    /// What both scenarios start with: where the kernel keeps `loop`'s registrations, two pipes,
    /// and a source in the default mode watching the old pipe's read end, counting its calls.
    private static func watchOldPipe(
        on loop: Loop
    ) throws -> (KernelRegistrations, old: Pipe, new: Pipe, oldSource: Loop.Source, oldCalls: AtomicInt) {
        let kernel = try KernelRegistrations.find(for: loop)
        let (old, new) = (try Pipe(), try Pipe())
        let oldCalls = AtomicInt()
        let oldSource = try Loop.Source(fileDescriptor: old.readEnd) { _ in oldCalls.increment() }
        loop.add(oldSource, to: .default)
        return (kernel, old, new, oldSource, oldCalls)
    }

    /// With every source invalidated, nothing is left registered, in the loop or the kernel;
    /// then closes what is left of the pipes (the new read end is the old's number).
    private static func checkReleased(_ loop: Loop, _ kernel: KernelRegistrations, closing old: Pipe, _ new: Pipe) {
        check(
            loop.registeredDescriptorCount == 0,
            "\(loop.registeredDescriptorCount) descriptors still registered after invalidating every source")
        checkNothingRegisteredInKernel(kernel, "after invalidating every source")
        Glibc.close(old.readEnd)
        Glibc.close(old.writeEnd)
        Glibc.close(new.writeEnd)
    }

    /// Puts `replacement`'s file under `number` (closing what `number` named), and prints the
    /// number for the parent.
    private static func reuse(_ number: Int32, for replacement: Int32) {
        precondition(dup2(replacement, number) == number, "dup2 failed: errno \(errno)")
        Glibc.close(replacement)
        // Written unbuffered: the parent reads it even if the child dies later.
        let line = "reused descriptor \(number)\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
    }

    /// A timer and a fresh pipe source still work.
    private static func expectLoopStillServes(_ loop: Loop) {
        let timerFired = AtomicInt()
        loop.add(try! Loop.Timer(after: .milliseconds(1)) { _ in timerFired.increment() }, to: .default)
        check(runUntil(loop) { timerFired.value > 0 }, "a timer added after the reuse never fired")
        let other: Pipe
        do {
            other = try Pipe()
        } catch {
            fail("no pipe for the check that a new source still works: \(error)")
            return
        }
        let heard = AtomicInt()
        let source = try! Loop.Source(fileDescriptor: other.readEnd) { _ in
            other.drain()
            heard.increment()
        }
        loop.add(source, to: .default)
        other.fill()
        check(runUntil(loop) { heard.value > 0 }, "a pipe source added after the reuse never fired")
        source.invalidate()
        other.close()
    }

    /// Runs the default mode until `condition` holds, for at most ``generousDeadline``.
    private static func runUntil(_ loop: Loop, _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + generousDeadline
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            _ = loop.run(timeout: .milliseconds(20), returnAfterSourceHandled: true)
        }
        return true
    }

    /// Runs `body` with a loop on a thread of its own, and waits for it.
    private static func onOwnThread(_ backend: BackendKind, _ body: @escaping @Sendable (Loop) throws -> Void) throws {
        let watchdog = try Watchdog("the descriptor reuse scenario on \(backend)")
        defer { watchdog.stop() }
        let thread = try TestThread {
            do {
                try body(try Loop.current(backend: backend))
            } catch {
                fail("the scenario threw \(error)")
            }
        }
        check(thread.join(), "the scenario did not finish")
    }
}

/// Reads whatever `descriptor` holds (it must be non-blocking).
private func drainDescriptor(_ descriptor: Int32) {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while read(descriptor, &buffer, buffer.count) > 0 {}
}
