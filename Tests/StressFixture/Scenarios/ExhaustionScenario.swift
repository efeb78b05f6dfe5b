import Glibc
import RunLoopKit
import TestSupport

/// The descriptor-exhaustion scenarios (see the Faults tests in ConformanceTests).
enum ExhaustionScenario {
    static func runOut(_ backend: BackendKind) throws {
        try ensureWorks(backend) // Also opens whatever a first loop opens for the whole process.
        let baseline = DescriptorSnapshot.take()
        try withDescriptorLimit(baseline.count + 48) {
            var loops: [ParkedLoopThread] = []
            var ports: [Loop.Port<Int>] = []
            // Loops, each on its own thread, until one cannot be made.
            var loopError: (any Error)?
            while loopError == nil, loops.count < 1_000 {
                report("making loop \(loops.count + 1)")
                let thread = try ParkedLoopThread(backend)
                if case let .failure(error) = thread.result {
                    loopError = error
                    thread.finish()
                } else {
                    loops.append(thread)
                }
            }
            check(!loops.isEmpty, "not one loop could be made")
            guard let loopError else { return fail("1,000 loops and descriptors never ran out") }
            expectTyped(loopError, "making loop \(loops.count + 1)")
            // Then ports, in what is left.
            var portError: (any Error)?
            while portError == nil, ports.count < 1_000 {
                do { ports.append(try Loop.Port<Int>()) } catch { portError = error }
            }
            guard let portError else { return fail("1,000 ports and descriptors never ran out") }
            expectTyped(portError, "making port \(ports.count + 1)")
            // Out of descriptors both fail again, while adding a port source to a loop, which
            // needs no new descriptor, still works.
            expectTyped(ParkedLoopThread.failure(backend), "making a loop with no descriptor left")
            do {
                _ = try Loop.Port<Int>()
                fail("a port was made with no descriptor left")
            } catch {
                expectTyped(error, "making a port with no descriptor left")
            }
            if case let .success(loop)? = loops.first?.result, let port = ports.first {
                let source = Loop.Source(port: port) { _ in }
                loop.add(source, to: .default)
                source.invalidate()
            }
            // Released: every loop torn down, every port closed.
            for thread in loops { thread.finish() }
            ports.removeAll()
        }
        let after = DescriptorSnapshot.take()
        check(after.count == baseline.count, "after releasing everything, left open: \(after.added(since: baseline))")
        try ensureWorks(backend)
    }

    static func partialCreation(_ backend: BackendKind) throws {
        try ensureWorks(backend)
        let baseline = DescriptorSnapshot.take()
        try withDescriptorLimit(baseline.count + 64) {
            for left in 0...8 {
                // Fill every descriptor but `left`.
                var fillers: [Int32] = []
                while true {
                    let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
                    guard fd >= 0 else { break }
                    fillers.append(fd)
                }
                for fd in fillers.suffix(left) { close(fd) }
                fillers.removeLast(min(left, fillers.count))
                // Said first: a library that gives up on the process (exits) leaves this as the last line.
                report("making a loop with \(left) descriptors left")
                let thread = try ParkedLoopThread(backend)
                if case let .failure(error) = thread.result {
                    expectTyped(error, "making a loop with \(left) descriptors left")
                }
                thread.finish()
                for fd in fillers { close(fd) }
                let now = DescriptorSnapshot.take()
                check(
                    now.count == baseline.count,
                    "with \(left) descriptors left, creating a loop leaked: \(now.added(since: baseline))")
            }
        }
        try ensureWorks(backend)
    }

    /// Checks that `error` is one of the typed errors running out of descriptors may give.
    private static func expectTyped(_ error: any Error, _ what: String, line: UInt = #line) {
        switch error {
        case let error as SystemError:
            check(error.errno.rawValue == EMFILE, "\(what): \(error)", line: line)
        case BackendError.unavailable:
            break
        default:
            fail("\(what): an untyped error \(error) (\(type(of: error)))", line: line)
        }
    }

    /// A loop with a port source and a pipe source serves both.
    private static func ensureWorks(_ backend: BackendKind) throws {
        let thread = try TestThread {
            do {
                let loop = try Loop.current(backend: backend)
                let (port, pipe) = (try Loop.Port<Int>(), try Pipe())
                defer { pipe.close() }
                let heard = AtomicInt()
                let portSource = Loop.Source(port: port) { _ in heard.increment() }
                let pipeSource = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in
                    pipe.drain()
                    heard.increment()
                }
                loop.add(portSource, to: .default)
                loop.add(pipeSource, to: .default)
                port.send(1)
                pipe.fill()
                let deadline = ContinuousClock.now + generousDeadline
                while heard.value < 2, ContinuousClock.now < deadline {
                    _ = loop.run(timeout: generousDeadline, returnAfterSourceHandled: true)
                }
                check(heard.value == 2, "a fresh loop did not serve its port and pipe")
                portSource.invalidate()
                pipeSource.invalidate()
            } catch {
                fail("a fresh loop could not be made: \(error)")
            }
        }
        check(thread.join(), "a fresh loop's thread did not finish")
    }

    /// Runs `body` with the soft descriptor limit at `limit`, then restores it.
    private static func withDescriptorLimit(_ limit: Int, _ body: () throws -> Void) throws {
        var saved = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &saved) == 0 else {
            throw SystemError("getrlimit", errno: errno)
        }
        var lowered = saved
        // A new descriptor takes the lowest free number, below the limit: count the open ones
        // and any gap below the highest.
        let highest = DescriptorSnapshot.take().entries.keys.max() ?? 0
        lowered.rlim_cur = rlim_t(max(limit, Int(highest) + 1 + 16))
        guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &lowered) == 0 else {
            throw SystemError("setrlimit", errno: errno)
        }
        defer { _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &saved) }
        try body()
    }
}

extension ParkedLoopThread {
    /// Tries to make a loop on a new thread that should fail; returns the error.
    static func failure(_ backend: BackendKind) -> any Error {
        do {
            let thread = try ParkedLoopThread(backend)
            defer { thread.finish() }
            if case let .failure(error) = thread.result { return error }
            return SystemError("a loop was made with no descriptor left", errno: 0)
        } catch {
            return error
        }
    }
}
