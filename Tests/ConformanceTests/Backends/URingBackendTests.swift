#if URing
import Glibc
import RunLoopKit
import Synchronization
import SystemPackage
import TestSupport
import Testing

/// What only the io_uring backend can get wrong: late and cancellation completions, one-shot
/// polls that must stay level-triggered, the `MSG_RING` waker, and why io_uring cannot start.
///
/// These drive a ``URingBackend`` directly, on a thread of their own (with a deadline), so a
/// lost wake fails the test instead of hanging it.
@Suite("io_uring backend")
struct URingBackendTests {
    /// The io_uring tests run where io_uring can start.
    static let uringStarts: ConditionTrait = .enabled(
        if: backends.contains(.uring), "io_uring cannot start here: see Backend availability")

    @Test(
        "a completion for an unregistered descriptor is never delivered",
        Self.uringStarts)
    func unregisteredIsNeverDelivered() async throws {
        try await withPipe { pipe in
            let reported = try await onURing { backend, wait in
                var tokens: [Token] = []
                // Armed and idle, then made ready, then unregistered before any wait sees it: the
                // readiness completion (and the cancellation's own) must both be dropped.
                try backend.register(pipe.readEnd, token: Token(rawValue: 1), interest: .readable)
                tokens += try wait(.zero).map(\.token)
                pipe.fill()
                try backend.unregister(pipe.readEnd, token: Token(rawValue: 1))
                tokens += try wait(.milliseconds(20)).map(\.token)
                // Reported once (so the poll completed and was re-armed), then unregistered.
                try backend.register(pipe.readEnd, token: Token(rawValue: 2), interest: .readable)
                tokens += try wait(generousDeadline).map(\.token)
                try backend.unregister(pipe.readEnd, token: Token(rawValue: 2))
                tokens += try wait(.milliseconds(20)).map(\.token)
                return tokens
            }
            #expect(reported == [Token(rawValue: 2)])
        }
    }

    @Test(
        "register, unregister and re-register in quick succession: only the newest token is reported",
        Self.uringStarts)
    func onlyTheNewestTokenIsReported() async throws {
        try await withPipe { pipe in
            let stale = try await onURing { backend, wait in
                var stale: [ReadyEvent] = []
                pipe.fill() // Ready throughout: every arming completes at once.
                var token: UInt64 = 0
                for round in 0..<200 {
                    // Every other round lets a poll get armed (and complete) before it is dropped.
                    for _ in 0..<3 {
                        token += 1
                        try backend.register(pipe.readEnd, token: Token(rawValue: token), interest: .readable)
                        if round % 2 == 0 {
                            stale += try wait(.zero).filter { $0.token != Token(rawValue: token) }
                        }
                        try backend.unregister(pipe.readEnd, token: Token(rawValue: token))
                    }
                    token += 1
                    try backend.register(pipe.readEnd, token: Token(rawValue: token), interest: .readable)
                    let events = try wait(generousDeadline)
                    stale += events.filter { $0.token != Token(rawValue: token) }
                    if events.isEmpty { Issue.record("round \(round): the ready pipe was not reported") }
                    try backend.unregister(pipe.readEnd, token: Token(rawValue: token))
                }
                return stale
            }
            #expect(stale == [])
        }
    }

    @Test(
        "registering again under a new token replaces it: the old one is never reported again",
        Self.uringStarts)
    func reregisteringReplacesTheToken() async throws {
        try await withPipe { pipe in
            let reported = try await onURing { backend, wait in
                var tokens: [Token] = []
                try backend.register(pipe.readEnd, token: Token(rawValue: 1), interest: .readable)
                pipe.fill()
                tokens += try wait(generousDeadline).map(\.token)
                // As Core changes a registration: unregister, register under a new token.
                try backend.unregister(pipe.readEnd, token: Token(rawValue: 1))
                try backend.register(pipe.readEnd, token: Token(rawValue: 2), interest: .readable)
                for _ in 0..<2 {
                    tokens += try wait(generousDeadline).map(\.token)
                }
                return tokens
            }
            #expect(reported == [Token(rawValue: 1), Token(rawValue: 2), Token(rawValue: 2)])
        }
    }

    @Test(
        "level-triggered: an unread pipe is reported by consecutive waits, a drained one is not",
        Self.uringStarts)
    func levelTriggered() async throws {
        try await withPipe { pipe in
            let waits = try await onURing { backend, wait in
                var waits: [[ReadyEvent]] = []
                try backend.register(pipe.readEnd, token: Token(rawValue: 7), interest: .readable)
                pipe.fill()
                for _ in 0..<3 {
                    waits.append(try wait(generousDeadline))
                }
                pipe.drain()
                waits.append(try wait(.milliseconds(20)))
                return waits
            }
            let readable = [ReadyEvent(token: Token(rawValue: 7), readiness: .readable)]
            #expect(waits == [readable, readable, readable, []])
        }
    }

    @Test(
        "a wake from another thread ends a forever-wait",
        Self.uringStarts)
    func wakeFromAnotherThread() async throws {
        try await onURing { backend, wait in
            let waker = backend.waker
            // Wake repeatedly, each time from a new thread, and wait forever each time: every
            // wake must end its wait, whether it lands before or during it.
            for _ in 0..<50 {
                _ = try TestThread { waker.wake() }
                #expect(try wait(nil) == [])
            }
        }
    }

    @Test(
        "a wake posted before the wait begins is not lost, and many wakes make one",
        Self.uringStarts)
    func wakeBeforeWait() async throws {
        try await onURing { backend, wait in
            for _ in 0..<3 { backend.waker.wake() }
            _ = try wait(nil)
            // The wake was consumed: the next wake sends again and ends the next wait.
            backend.waker.wake()
            #expect(try wait(nil) == [])
        }
    }

    @Test(
        "a wait with nothing to report is never shorter than its timeout",
        Self.uringStarts)
    func timeoutIsNotEarly() async throws {
        let elapsed = try await onURing { backend, wait in
            let start = ContinuousClock.now
            _ = try wait(.microseconds(15_500))
            return ContinuousClock.now - start
        }
        #expect(elapsed >= .microseconds(15_500))
    }

    @Test(
        "unregistering releases the descriptor at once: closing it really closes it",
        Self.uringStarts)
    func unregisterReleasesTheFile() async throws {
        let peerSawHangUp = try await onURing { backend, wait in
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                throw SystemError("socketpair", errno: currentErrno())
            }
            defer { close(ends[1]) }
            try backend.register(ends[0], token: Token(rawValue: 1), interest: .readable)
            _ = try wait(.zero) // The poll is armed and holds the file.
            try backend.unregister(ends[0], token: Token(rawValue: 1))
            close(ends[0])
            // Checked while the backend lives and before this thread waits again: no poll
            // request may still hold the socket open, so the peer reads end of file.
            var byte: UInt8 = 0
            return recv(ends[1], &byte, 1, Int32(MSG_DONTWAIT)) == 0
        }
        #expect(peerSawHangUp)
    }

    @Test(
        "why io_uring cannot start, from the errno io_uring_setup failed with",
        arguments: [
            (ENOSYS, nil, "kernelTooOld"),
            (ENOSYS, 2, "kernelTooOld"),
            (EPERM, 1, "disabledByKernel"),
            (EPERM, 2, "disabledByKernel"),
            (EPERM, 0, "blockedBySandbox"),
            (EPERM, nil, "blockedBySandbox"),
            (EACCES, 0, "blockedBySandbox"),
            (EACCES, 2, "blockedBySandbox"),
            (ENOMEM, 0, "lockedMemoryLimit"),
            (EINVAL, 0, "other"),
            (EMFILE, nil, "other"),
        ] as [(Int32, Int?, String)])
    func unavailabilityFromErrno(_ code: Int32, _ disabled: Int?, _ expected: String) async throws {
        try await offThePool {
            let error = SystemError("io_uring_setup", errno: code)
            let reason = URingBackend.unavailability(setupErrno: Errno(rawValue: code), ioUringDisabled: disabled)
            let name: String =
                switch reason {
                case .kernelTooOld(error): "kernelTooOld"
                case .disabledByKernel(error): "disabledByKernel"
                case .blockedBySandbox(error): "blockedBySandbox"
                case .lockedMemoryLimit(error): "lockedMemoryLimit"
                case .other(error): "other"
                default: "wrong error in \(reason)"
                }
            #expect(name == expected)
        }
    }

    /// `prepareForHostWait` with an event already in hand: re-arming a poll finds its
    /// descriptor closed behind Core's back and the number reused (an error event, reported
    /// without any completion). Only the no-op request it submits then makes the ring's
    /// descriptor readable for the host; the next wait reports the event and drops the no-op.
    @Test(
        "the host wait's preparation with an event already harvested makes the ring's descriptor readable at once",
        Self.uringStarts)
    func preparedWithEventInHand() async throws {
        let watched = try Pipe()
        defer { watched.close() }
        let stranger = try Pipe()
        defer { stranger.close() }
        let (polled, reported) = try await onURing { backend, wait in
            guard case let .descriptor(ring, prepare?) = backend.embedding else { return (Int32(-1), [ReadyEvent]()) }
            try backend.register(watched.readEnd, token: Token(rawValue: 1), interest: .readable)
            watched.fill()
            // The poll completes once (the file is checked again before the next arming)...
            let events = try wait(generousDeadline)
            // ...and the number now names another file, with nothing to read.
            guard dup2(stranger.readEnd, watched.readEnd) == watched.readEnd else { return (Int32(-2), events) }
            try prepare()
            var entry = pollfd(fd: ring, events: Int16(POLLIN), revents: 0)
            let polled = poll(&entry, 1, Int32(hangDeadline.components.seconds * 1000))
            let reported = try wait(.zero)
            try backend.unregister(watched.readEnd, token: Token(rawValue: 1))
            return (polled, reported)
        }
        #expect(polled == 1, "the host's poll of the ring's descriptor (1: readable, 0: timed out)")
        #expect(reported == [ReadyEvent(token: Token(rawValue: 1), readiness: .error)])
    }
}
/// Runs `body` on a thread of its own with a new io_uring backend, driven directly (the thread's
/// loop, ``onLoopThread(_:within:fileID:line:_:)``'s, stays unused), under a deadline that fails
/// the test where a lost wake would hang it. `wait` waits the backend out (``waitOut``) for a
/// timeout and returns what it reported.
private func onURing<T: Sendable>(
    _ body: @escaping @Sendable (URingBackend, _ wait: (Duration?) throws -> [ReadyEvent]) throws -> T
) async throws -> T {
    try await onLoopThread(.uring) { _ in
        let backend = try URingBackend()
        var events: [ReadyEvent] = []
        return try body(backend) { timeout in
            try waitOut(backend, timeout: timeout, into: &events)
            return events
        }
    }
}
#endif
