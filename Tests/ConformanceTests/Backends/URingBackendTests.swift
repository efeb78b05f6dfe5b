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
    @Test(
        "a completion for an unregistered descriptor is never delivered",
        .enabled(if: backends.contains(.uring), "io_uring cannot start here: see Backend availability"))
    func unregisteredIsNeverDelivered() async throws {
        let pipe = try Pipe()
        defer { pipe.close() }
        let reported = try await onLoopThread(.uring) { _ in
            let backend = try URingBackend()
            var events: [ReadyEvent] = []
            var tokens: [Token] = []
            // Armed and idle, then made ready, then unregistered before any wait sees it: the
            // readiness completion (and the cancellation's own) must both be dropped.
            try backend.register(pipe.readEnd, token: Token(rawValue: 1), interest: .readable)
            try waitOut(backend, timeout: .zero, into: &events)
            tokens += events.map(\.token)
            pipe.fill()
            try backend.unregister(pipe.readEnd, token: Token(rawValue: 1))
            try waitOut(backend, timeout: .milliseconds(20), into: &events)
            tokens += events.map(\.token)
            // Reported once (so the poll completed and was re-armed), then unregistered.
            try backend.register(pipe.readEnd, token: Token(rawValue: 2), interest: .readable)
            try waitOut(backend, timeout: generousDeadline, into: &events)
            tokens += events.map(\.token)
            try backend.unregister(pipe.readEnd, token: Token(rawValue: 2))
            try waitOut(backend, timeout: .milliseconds(20), into: &events)
            tokens += events.map(\.token)
            return tokens
        }
        #expect(reported == [Token(rawValue: 2)])
    }

    @Test(
        "register, unregister and re-register in quick succession: only the newest token is reported",
        .enabled(if: backends.contains(.uring), "io_uring cannot start here: see Backend availability"))
    func onlyTheNewestTokenIsReported() async throws {
        let pipe = try Pipe()
        defer { pipe.close() }
        let stale = try await onLoopThread(.uring) { _ in
            let backend = try URingBackend()
            var events: [ReadyEvent] = []
            var stale: [ReadyEvent] = []
            pipe.fill() // Ready throughout: every arming completes at once.
            var token: UInt64 = 0
            for round in 0..<200 {
                // Every other round lets a poll get armed (and complete) before it is dropped.
                for _ in 0..<3 {
                    token += 1
                    try backend.register(pipe.readEnd, token: Token(rawValue: token), interest: .readable)
                    if round % 2 == 0 {
                        try waitOut(backend, timeout: .zero, into: &events)
                        stale += events.filter { $0.token != Token(rawValue: token) }
                    }
                    try backend.unregister(pipe.readEnd, token: Token(rawValue: token))
                }
                token += 1
                try backend.register(pipe.readEnd, token: Token(rawValue: token), interest: .readable)
                try waitOut(backend, timeout: generousDeadline, into: &events)
                stale += events.filter { $0.token != Token(rawValue: token) }
                if events.isEmpty { Issue.record("round \(round): the ready pipe was not reported") }
                try backend.unregister(pipe.readEnd, token: Token(rawValue: token))
            }
            return stale
        }
        #expect(stale == [])
    }

    @Test(
        "registering again under a new token replaces it: the old one is never reported again",
        .enabled(if: backends.contains(.uring), "io_uring cannot start here: see Backend availability"))
    func reregisteringReplacesTheToken() async throws {
        let pipe = try Pipe()
        defer { pipe.close() }
        let reported = try await onLoopThread(.uring) { _ in
            let backend = try URingBackend()
            var events: [ReadyEvent] = []
            var tokens: [Token] = []
            try backend.register(pipe.readEnd, token: Token(rawValue: 1), interest: .readable)
            pipe.fill()
            try waitOut(backend, timeout: generousDeadline, into: &events)
            tokens += events.map(\.token)
            // As Core changes a registration: unregister, register under a new token.
            try backend.unregister(pipe.readEnd, token: Token(rawValue: 1))
            try backend.register(pipe.readEnd, token: Token(rawValue: 2), interest: .readable)
            for _ in 0..<2 {
                try waitOut(backend, timeout: generousDeadline, into: &events)
                tokens += events.map(\.token)
            }
            return tokens
        }
        #expect(reported == [Token(rawValue: 1), Token(rawValue: 2), Token(rawValue: 2)])
    }

    @Test(
        "level-triggered: an unread pipe is reported by consecutive waits, a drained one is not",
        .enabled(if: backends.contains(.uring), "io_uring cannot start here: see Backend availability"))
    func levelTriggered() async throws {
        let pipe = try Pipe()
        defer { pipe.close() }
        let waits = try await onLoopThread(.uring) { _ in
            let backend = try URingBackend()
            var events: [ReadyEvent] = []
            var waits: [[ReadyEvent]] = []
            try backend.register(pipe.readEnd, token: Token(rawValue: 7), interest: .readable)
            pipe.fill()
            for _ in 0..<3 {
                try waitOut(backend, timeout: generousDeadline, into: &events)
                waits.append(events)
            }
            pipe.drain()
            try waitOut(backend, timeout: .milliseconds(20), into: &events)
            waits.append(events)
            return waits
        }
        let readable = [ReadyEvent(token: Token(rawValue: 7), readiness: .readable)]
        #expect(waits == [readable, readable, readable, []])
    }

    @Test(
        "a wake from another thread ends a forever-wait",
        .enabled(if: backends.contains(.uring), "io_uring cannot start here: see Backend availability"))
    func wakeFromAnotherThread() async throws {
        try await onLoopThread(.uring) { _ in
            let backend = try URingBackend()
            let waker = backend.waker
            var events: [ReadyEvent] = []
            // Wake repeatedly, each time from a new thread, and wait forever each time: every
            // wake must end its wait, whether it lands before or during it.
            for _ in 0..<50 {
                _ = try TestThread { waker.wake() }
                try waitOut(backend, timeout: nil, into: &events)
                #expect(events == [])
            }
        }
    }

    @Test(
        "a wake posted before the wait begins is not lost, and many wakes make one",
        .enabled(if: backends.contains(.uring), "io_uring cannot start here: see Backend availability"))
    func wakeBeforeWait() async throws {
        try await onLoopThread(.uring) { _ in
            let backend = try URingBackend()
            var events: [ReadyEvent] = []
            for _ in 0..<3 { backend.waker.wake() }
            try waitOut(backend, timeout: nil, into: &events)
            // The wake was consumed: the next wake sends again and ends the next wait.
            backend.waker.wake()
            try waitOut(backend, timeout: nil, into: &events)
            #expect(events == [])
        }
    }

    @Test(
        "a wait with nothing to report is never shorter than its timeout",
        .enabled(if: backends.contains(.uring), "io_uring cannot start here: see Backend availability"))
    func timeoutIsNotEarly() async throws {
        let elapsed = try await onLoopThread(.uring) { _ in
            let backend = try URingBackend()
            var events: [ReadyEvent] = []
            let start = ContinuousClock.now
            try waitOut(backend, timeout: .microseconds(15_500), into: &events)
            return ContinuousClock.now - start
        }
        #expect(elapsed >= .microseconds(15_500))
    }

    @Test(
        "unregistering releases the descriptor at once: closing it really closes it",
        .enabled(if: backends.contains(.uring), "io_uring cannot start here: see Backend availability"))
    func unregisterReleasesTheFile() async throws {
        let peerSawHangUp = try await onLoopThread(.uring) { _ in
            let backend = try URingBackend()
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                throw SystemError("socketpair", errno: currentErrno())
            }
            defer { close(ends[1]) }
            var events: [ReadyEvent] = []
            try backend.register(ends[0], token: Token(rawValue: 1), interest: .readable)
            try waitOut(backend, timeout: .zero, into: &events) // The poll is armed and holds the file.
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
        .enabled(if: backends.contains(.uring), "io_uring cannot start here: see Backend availability"))
    func preparedWithEventInHand() async throws {
        let watched = try Pipe()
        defer { watched.close() }
        let stranger = try Pipe()
        defer { stranger.close() }
        let (polled, reported) = try await onLoopThread(.uring) { _ in
            let backend = try URingBackend()
            guard case let .descriptor(ring, prepare?) = backend.embedding else { return (Int32(-1), [ReadyEvent]()) }
            var events: [ReadyEvent] = []
            try backend.register(watched.readEnd, token: Token(rawValue: 1), interest: .readable)
            watched.fill()
            // The poll completes once (the file is checked again before the next arming)...
            try waitOut(backend, timeout: generousDeadline, into: &events)
            // ...and the number now names another file, with nothing to read.
            guard dup2(stranger.readEnd, watched.readEnd) == watched.readEnd else { return (Int32(-2), events) }
            try prepare()
            var entry = pollfd(fd: ring, events: Int16(POLLIN), revents: 0)
            let polled = poll(&entry, 1, Int32(hangDeadline.components.seconds * 1000))
            try waitOut(backend, timeout: .zero, into: &events)
            try backend.unregister(watched.readEnd, token: Token(rawValue: 1))
            return (polled, events)
        }
        #expect(polled == 1, "the host's poll of the ring's descriptor (1: readable, 0: timed out)")
        #expect(reported == [ReadyEvent(token: Token(rawValue: 1), readiness: .error)])
    }
}
#endif
