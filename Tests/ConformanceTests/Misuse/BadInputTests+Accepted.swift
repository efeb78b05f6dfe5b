import Dispatch
import Glibc
import RunLoopKit
import TestSupport
import Testing

/// Tests/README.md: the bad input RunLoopKit accepts, and what it then does — no effect, a
/// clamp, a report on standard error, or (marked) something a user would not expect.
@Suite("Bad input accepted: no effect, clamped or reported")
struct BadInputAcceptedTests {
    // MARK: Loops and modes

    @Test("addCommonMode(.common), or of a mode already common, has no effect", arguments: backends)
    func addCommonModeCommon(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            loop.addCommonMode(.common)
            loop.addCommonMode(.default)
            #expect(loop.commonModes == [.default])
            loop.addCommonMode("tracking")
            loop.addCommonMode("tracking")
            #expect(loop.commonModes == [.default, "tracking"])
        }
    }

    @Test("a mode's name: any string is a mode, and the reserved names are .default and .common", arguments: backends)
    func modeNames(_ backend: BackendKind) async throws {
        #expect(Loop.Mode("kRunLoopCommonModes") == .common)
        #expect(Loop.Mode("kRunLoopDefaultMode") == .default)
        try await onLoopThread(backend) { loop in
            let fired = Ref<Bool>()
            loop.add(try Loop.Timer(after: .zero) { _ in fired.value = true }, to: "")
            #expect(loop.run("", timeout: generousDeadline) == .finished)
            #expect(fired.value == true)
        }
    }

    @Test("run(timeout:) with an enormous timeout saturates: the loop sleeps until stopped", arguments: backends)
    func enormousTimeout(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            let (source, port) = try keepAliveSource()
            loop.add(source, to: .default)
            let slept = try stopOnceAsleep(loop)
            #expect(loop.run(timeout: .seconds(Int64.max)) == .stopped)
            #expect(slept.wait())
            #expect(loop.statistics.wakeups[.woken] == 1)
            source.invalidate()
            withExtendedLifetime(port) {}
        }
    }

    @Test("run(timeout:) with a positive timeout below a nanosecond makes one pass and times out", arguments: backends)
    func subNanosecondTimeout(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            let (source, port) = try keepAliveSource()
            loop.add(source, to: .default)
            let trace = Trace()
            let observer = loop.record(.beforeTimers, into: trace)
            #expect(loop.run(timeout: .nanoseconds(0.000_001)) == .timedOut)
            #expect(trace.all == ["beforeTimers"])
            observer.invalidate()
            source.invalidate()
            withExtendedLifetime(port) {}
        }
    }

    @Test("perform(in: []) traps with a message: the block could never run", arguments: backends)
    func performInNoMode(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            try await onLoopThread(backend) { loop in loop.perform(in: []) {} }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Loop.perform(in:_:) with no mode"), "\(text.prefix(300))")
    }

    @Test("perform(after:) with a negative delay runs the block as soon as possible", arguments: backends)
    func performAfterNegativeDelay(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            let ran = Ref<Bool>()
            let before = ContinuousClock.now
            let timer = loop.perform(after: .zero - .seconds(3600)) { ran.value = true }
            #expect(timer.nextFireInstant >= before)
            #expect(loop.run(timeout: generousDeadline) == .finished)
            #expect(ran.value == true)
        }
    }

    @Test("perform(after:in: []) traps with a message: the block could never run", arguments: backends)
    func performAfterInNoMode(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            try await onLoopThread(backend) { loop in _ = loop.perform(after: .zero, in: []) {} }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Loop.perform(after:in:_:) with no mode"), "\(text.prefix(300))")
    }

    // MARK: Items

    @Test("an invalidated item: adding, signalling and invalidating again have no effect", arguments: backends)
    func invalidatedItems(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            let cancels = Trace()
            let source = Loop.Source(cancel: { _, mode in cancels("cancel \(mode)") }, perform: {})
            loop.add(source, to: .default)
            source.invalidate()
            source.invalidate()
            #expect(cancels.all == ["cancel \(Loop.Mode.default)"])
            loop.add(source, to: .default)
            source.signal()
            #expect(!loop.contains(source, in: .default))
            #expect(!source.isSignalled)
            let timer = try Loop.Timer(after: .zero) { _ in }
            timer.invalidate()
            loop.add(timer, to: .default)
            #expect(!loop.contains(timer, in: .default))
            let observer = Loop.Observer(activities: .allActivities) { _, _ in }
            observer.invalidate()
            loop.add(observer, to: .default)
            #expect(!loop.contains(observer, in: .default))
            #expect(loop.run(timeout: generousDeadline) == .finished)
        }
    }

    @Test("removing an item from a mode or a loop it is not in has no effect", arguments: backends)
    func removeWhatIsNotThere(_ backend: BackendKind) async throws {
        let worker = try LoopThread(backend: backend)
        defer { worker.stop() }
        try await onLoopThread(backend) { loop in
            let trace = Trace()
            let timer = try Loop.Timer(after: .zero) { _ in trace("timer") }
            let source = Loop.Source { trace("source") }
            let observer = Loop.Observer(activities: .entry) { _, _ in trace("entry") }
            loop.add(timer, to: .default)
            loop.add(source, to: .default)
            loop.add(observer, to: .default)
            for mode: Loop.Mode in ["elsewhere", .default] {
                let other = mode == .default ? worker.loop : loop
                other.remove(timer, from: mode)
                other.remove(source, from: mode)
                other.remove(observer, from: mode)
            }
            #expect(
                loop.contains(timer, in: .default) && loop.contains(source, in: .default)
                    && loop.contains(observer, in: .default))
            source.signal()
            #expect(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource)
            #expect(trace.all == ["entry", "source", "timer"])
            source.invalidate()
        }
    }

    // MARK: Descriptor sources

    @Test("an interest with no known bit is refused, naming interest", arguments: backends)
    func unknownInterestBits(_ backend: BackendKind) async throws {
        try await withPipe { pipe in
            expectRefused("interest", value: "rawValue 128") {
                try Loop.Source(fileDescriptor: pipe.readEnd, interest: Interest(rawValue: 0x80)) { _ in }
            }
        }
    }

    @Test("a descriptor that cannot be polled (/dev/null) is refused, the same on every backend", arguments: backends)
    func unpollableDescriptor(_ backend: BackendKind) async throws {
        let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let error = #expect(throws: ArgumentError.self) { try Loop.Source(fileDescriptor: fd) { _ in } }
        #expect(error?.argument == "fileDescriptor")
        #expect(error?.reason.contains("readiness") == true)
    }

    @Test(
        "a descriptor closed after its source was made: reported on standard error when the loop arms it, source invalidated",
        arguments: backends)
    func descriptorClosedBehindItsSource(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            try await onLoopThread(backend) { loop in
                let pipe = try Pipe()
                // A number near the top of the limit: the runtime may open a file meanwhile (it
                // did under TSan), and would take the pipe's low number, making the report
                // "closed and reused".
                let fd = try highDescriptor(duplicating: pipe.readEnd)
                pipe.close()
                let source = try Loop.Source(fileDescriptor: fd) { _ in }
                close(fd)
                loop.add(source, to: .default)
                let run = loop.run(timeout: .zero)
                writeToStandardError("\nvalid \(source.isValid) run \(run)\n")
            }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            text.contains(
                "was closed while its source was in a loop; invalidate a source before closing its descriptor"),
            "\(text)")
        #expect(text.contains("valid false run timedOut"), "\(text)")
    }

    // MARK: Timers

    @Test("Timer(after:) with a negative delay: the past instant is clamped to now when added", arguments: backends)
    func timerNegativeDelay(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            let fired = Ref<Bool>()
            let before = ContinuousClock.now
            let timer = try Loop.Timer(after: .zero - .seconds(3600)) { _ in fired.value = true }
            #expect(timer.nextFireInstant < before)
            loop.add(timer, to: .default)
            #expect(timer.nextFireInstant >= before)
            #expect(loop.run(timeout: generousDeadline) == .finished)
            #expect(fired.value == true)
        }
    }

    @Test("a timer Int64.max seconds away: accepted, the loop sleeps until stopped", arguments: backends)
    func enormousTimer(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            let fired = Ref<Bool>()
            let timer = try Loop.Timer(after: .seconds(Int64.max)) { _ in fired.value = true }
            loop.add(timer, to: .default)
            let slept = try stopOnceAsleep(loop)
            #expect(loop.run() == .stopped)
            #expect(slept.wait())
            #expect(fired.value == nil)
            #expect(timer.isValid)
            timer.invalidate()
        }
    }

    @Test(
        "a timer whose instant plus tolerance is beyond Int64.max seconds: the loop sleeps until stopped",
        arguments: backends)
    func overflowingTimer(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            let timer = try Loop.Timer(after: .seconds(Int64.max), tolerance: .seconds(Int64.max)) { _ in }
            loop.add(timer, to: .default)
            let slept = try stopOnceAsleep(loop)
            #expect(loop.run() == .stopped)
            #expect(slept.isOpen)
            timer.invalidate()
        }
    }

    @Test("nextFireInstant = a past instant re-arms to now: the timer fires in the next pass", arguments: backends)
    func nextFireInstantInThePast(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            let fired = Ref<Bool>()
            let timer = try Loop.Timer(after: .seconds(3600)) { _ in fired.value = true }
            let unbound = try Loop.Timer(after: .seconds(3600)) { _ in }
            let before = ContinuousClock.now
            unbound.nextFireInstant = before - .seconds(60)
            #expect(unbound.nextFireInstant >= before)
            loop.add(timer, to: .default)
            timer.nextFireInstant = before - .seconds(60)
            #expect(timer.nextFireInstant >= before)
            #expect(loop.run(timeout: generousDeadline) == .finished)
            #expect(fired.value == true)
        }
    }

    @Test("setTolerance above half the interval is clamped; on an invalidated timer it has no effect")
    func setToleranceClampedOrIgnored() async throws {
        try await offThePool { () throws in
            let timer = try Loop.Timer(after: .seconds(1), repeating: .seconds(1)) { _ in }
            try timer.setTolerance(.seconds(5))
            #expect(timer.tolerance == .milliseconds(500))
            timer.invalidate()
            try timer.setTolerance(.milliseconds(100))
            #expect(timer.tolerance == .milliseconds(500))
            // A negative value is still refused there.
            #expect(throws: ArgumentError.self) { try timer.setTolerance(.zero - .seconds(1)) }
        }
    }

    @Test("an interval below a nanosecond is refused, naming interval or repeating")
    func subNanosecondInterval() async throws {
        try await offThePool { () throws in
            let error = #expect(throws: ArgumentError.self) {
                try Loop.Timer(fireAt: .now, interval: .nanoseconds(0.000_000_001)) { _ in }
            }
            #expect(error?.argument == "interval")
            #expect(error?.reason.contains("nanosecond") == true)
            #expect(throws: ArgumentError.self) { try Loop.Timer(after: .zero, repeating: .nanoseconds(0.5)) { _ in } }
        }
    }

    // MARK: Observers

    @Test("an observer of no activity (empty, or unknown bits) is accepted and never called", arguments: backends)
    func observerOfNothing(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            let calls = Trace()
            let empty = Loop.Observer(activities: []) { _, activity in calls("empty \(activity)") }
            let unknown = Loop.Observer(activities: Loop.Activity(rawValue: 1 << 3)) { _, activity in
                calls("unknown \(activity)")
            }
            loop.add(empty, to: .default)
            loop.add(unknown, to: .default)
            loop.add(try Loop.Timer(after: .zero) { _ in }, to: .default)
            #expect(loop.run(timeout: generousDeadline) == .finished)
            #expect(calls.all == [])
            #expect(empty.isValid && unknown.isValid)
        }
    }

    // MARK: Ports and worker threads

    @Test(
        "Port.send with no source, or after its source was invalidated: queued for the next source, in order",
        arguments: backends)
    func sendWithNoReceiver(_ backend: BackendKind) async throws {
        try await onLoopThread(backend) { loop in
            let trace = Trace()
            let port = try Loop.Port<Int>()
            port.send(1)
            let first = Loop.Source(port: port) { trace("first \($0)") }
            loop.add(first, to: .default)
            #expect(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource)
            first.invalidate()
            port.send(2)
            port.send(3)
            let second = Loop.Source(port: port) { trace("second \($0)") }
            loop.add(second, to: .default)
            #expect(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource)
            #expect(trace.all == ["first 1", "second 2", "second 3"])
            second.invalidate()
        }
    }

    @Test("LoopThread(name:) longer than 15 bytes: the thread gets the first 15", arguments: backends)
    func longThreadName(_ backend: BackendKind) async throws {
        let thread = try LoopThread(name: "a-very-long-thread-name", backend: backend)
        defer { thread.stop() }
        let name = Ref<String>()
        thread.perform(waitUntilDone: true) {
            // The kernel's copy of the name, with a newline after it.
            let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = read(fd, &buffer, buffer.count)
            close(fd)
            name.value = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self).trimmingNewline
        }
        #expect(name.value == "a-very-long-thr")
    }

    @Test("LoopThread.perform(waitUntilDone: true) on its own thread runs the block at once", arguments: backends)
    func performWaitingOnOwnThread(_ backend: BackendKind) async throws {
        let thread = try LoopThread(backend: backend)
        defer { thread.stop() }
        let trace = Trace()
        let accepted = thread.perform(waitUntilDone: true) {
            trace("outer")
            let inner = thread.perform(waitUntilDone: true) { trace("inner") }
            trace("outer again, inner accepted: \(inner)")
        }
        #expect(accepted)
        #expect(trace.all == ["outer", "inner", "outer again, inner accepted: true"])
    }

    @Test("Loop.main(creatingWith:) with another kind than the main loop's throws kindMismatch")
    func mainWithAnotherKind() async throws {
        try await offThePool { () throws in
            let main = Loop.main
            // A third-party wrapper's kind (ThirdPartyBackendTests) is another kind in any build,
            // one backend alone included; then every other built-in kind.
            let others =
                [ForwardingBackend.factory(over: main.backend)]
                + backends.filter { $0 != main.backend }.map(\.factory)
            for other in others {
                #expect(throws: BackendError.kindMismatch(existing: main.backend, requested: other.kind)) {
                    try Loop.main(creatingWith: other)
                }
            }
            #expect(Loop.main === main)
        }
    }
}

/// Starts a thread that stops `loop` once it sleeps; the latch opens when it did.
private func stopOnceAsleep(_ loop: Loop) throws -> Latch {
    let slept = Latch()
    _ = try TestThread {
        let deadline = ContinuousClock.now + generousDeadline
        while !loop.isWaiting, ContinuousClock.now < deadline { sched_yield() }
        if loop.isWaiting { slept.open() }
        loop.stop()
    }
    return slept
}

extension String {
    /// The string without one trailing newline.
    fileprivate var trimmingNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}
