import Glibc
import RunLoopCore

extension BackendConformance {
    /// Registrations: a change of interest and token, unregister (also of closed descriptors),
    /// the errors a bad descriptor gets, and calls made from another thread between waits.
    static var registrationChecks: [Check] {
        [
            Check(
                "registering again after unregister changes the interest and the token (as Core changes a registration)",
                reregister),
            Check("after unregister a descriptor is not reported, even when ready", unregisterSilences),
            Check("unregistering a closed or never registered descriptor is not an error", unregisterClosed),
            Check("registering a negative or closed descriptor throws SystemError(badFileDescriptor)", badDescriptor),
            Check("the backend can be called from another thread between waits", callsFromAnotherThread),
        ]
    }

    private static func reregister(_ context: Context) throws {
        let subject = try Subject(context)
        let pipe = try KitPipe()
        defer { pipe.close() }
        // A pipe's write end is never readable, and is writable while the pipe has room.
        try subject.register(pipe.writeEnd, 10, .readable)
        try subject.waitOut(.zero)
        try expect(
            subject.events.isEmpty, "no event for a write end watched for readable", observed: subject.events.listed)
        // Core changes a registration so: unregister, then register afresh under a new token.
        try subject.unregister(pipe.writeEnd, 10)
        try subject.register(pipe.writeEnd, 11, .writable)
        try subject.waitForEvents("the write end, now watched for writable, to be reported")
        try expect(
            subject.tokens == [11] && subject.events[0].readiness.contains(.writable),
            "one event with the new token #11, writable (never the old #10)", observed: subject.events.listed)
        try subject.unregister(pipe.writeEnd, 11)
    }

    private static func unregisterSilences(_ context: Context) throws {
        let subject = try Subject(context)
        let pipe = try KitPipe()
        defer { pipe.close() }
        // Unregistered before any wait saw it ready.
        try subject.register(pipe.readEnd, 3, .readable)
        pipe.fill()
        try subject.unregister(pipe.readEnd, 3)
        try subject.waitOut(.milliseconds(2))
        try expect(subject.events.isEmpty, "no event after unregister", observed: subject.events.listed)
        // Unregistered after a wait reported it (a backend that re-arms must disarm).
        try subject.register(pipe.readEnd, 4, .readable)
        try subject.waitForEvents("the ready pipe, registered again, to be reported")
        try subject.unregister(pipe.readEnd, 4)
        try subject.waitOut(.milliseconds(2))
        try expect(
            subject.events.isEmpty, "no event after unregister, though the pipe is still ready",
            observed: subject.events.listed)
    }

    private static func unregisterClosed(_ context: Context) throws {
        let subject = try Subject(context)
        let never = try KitPipe()
        try subject.unregister(never.readEnd, 40, note: " of a descriptor never registered")
        never.close()

        let pipe = try KitPipe()
        try subject.register(pipe.readEnd, 41, .readable)
        pipe.fill()
        pipe.close()
        try subject.unregister(pipe.readEnd, 41, note: " of a descriptor closed while registered")
        try subject.waitOut(.zero)
        try expect(subject.events.isEmpty, "no event for the closed descriptor", observed: subject.events.listed)

        // Closed and its number reused by a file that cannot be polled (a regular file), in one
        // step here (dup2), as another thread's open may do between a close and the unregister.
        let replaced = try KitPipe()
        defer { replaced.close() } // The read end's number is the file's by then.
        try subject.register(replaced.readEnd, 43, .readable)
        try replaceWithRegularFile(replaced.readEnd)
        try subject.unregister(
            replaced.readEnd, 43, note: " of a descriptor closed and reused by a regular file while registered")

        // The number may be reused at once (the lowest free one is): registering it afresh
        // works, and only its new token is ever reported.
        let next = try KitPipe()
        defer { next.close() }
        try subject.register(next.readEnd, 42, .readable)
        next.fill()
        try subject.waitForEvents("a new pipe registered after the closed one to be reported")
        try expect(subject.tokens == [42], "only the new token #42", observed: subject.events.listed)
        try subject.unregister(next.readEnd, 42)
    }

    private static func badDescriptor(_ context: Context) throws {
        let subject = try Subject(context)
        for (descriptor, what) in [
            (Int32(-1), "a negative descriptor"), (descriptorNotOpen(), "a descriptor not open"),
        ] {
            do {
                try subject.backend.register(descriptor, token: Token(rawValue: 50), interest: .readable)
                try? subject.backend.unregister(descriptor, token: Token(rawValue: 50))
                throw Mismatch(
                    expected: "register of \(what) (\(descriptor)) to throw SystemError with errno badFileDescriptor",
                    observed: "it succeeded")
            } catch let error as SystemError {
                try expect(
                    error.errno == .badFileDescriptor,
                    "register of \(what) (\(descriptor)) to throw SystemError with errno badFileDescriptor",
                    observed: "\(error)")
            }
        }
    }

    private static func callsFromAnotherThread(_ context: Context) throws {
        let subject = try Subject(context)
        let pipe = try KitPipe()
        defer { pipe.close() }
        pipe.fill()
        // As Core does when a source is invalidated on another thread: the loop is not
        // waiting, and the calls are ordered (here by joining the helper).
        try onHelper(context) { try subject.register(pipe.readEnd, 60, .readable) }
        try subject.waitForEvents("a descriptor registered on another thread to be reported")
        try expect(subject.tokens == [60], "token #60", observed: subject.events.listed)
        try onHelper(context) { try subject.unregister(pipe.readEnd, 60) }
        try subject.waitOut(.milliseconds(2))
        try expect(
            subject.events.isEmpty, "no event after an unregister made on another thread",
            observed: subject.events.listed)
    }

    /// Runs `body` on a helper thread and waits for it.
    private static func onHelper(_ context: Context, _ body: @escaping @Sendable () throws -> Void) throws {
        let outcome = Lock<Result<Void, any Error>?>(nil)
        let helper = try Helper { outcome.withLock { $0 = Result { try body() } } }
        try expect(
            helper.join(within: context.deadline), "a call on another thread to return",
            observed: "it was still blocked after \(context.deadline)")
        try outcome.withLock { $0! }.get()
    }

    /// Makes `descriptor` refer to a regular file (this program's executable), closing what it
    /// referred to, in one step.
    private static func replaceWithRegularFile(_ descriptor: Int32) throws {
        let file = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { throw SystemError("open /proc/self/exe", errno: currentErrno()) }
        defer { Glibc.close(file) }
        guard dup2(file, descriptor) >= 0 else { throw SystemError("dup2", errno: currentErrno()) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }
}
