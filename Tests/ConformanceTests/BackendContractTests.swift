import Glibc
import RunLoopKit
import TestSupport
import Testing

/// The backend protocol's contract (Sources/Core/Backend.swift), checked on each backend
/// directly, below the loop.
@Suite("Backend contract")
struct BackendContractTests {
    @Test("a readable descriptor is reported with its token", arguments: backends)
    func readiness(_ kind: BackendKind) throws {
        let backend = try kind.factory.make()
        let pipe = try Pipe()
        defer { pipe.close() }
        try backend.register(pipe.readEnd, token: Token(rawValue: 7), interest: .readable)
        pipe.fill()
        var events: [ReadyEvent] = []
        try waitOut(backend, timeout: generousDeadline, into: &events)
        #expect(events.map(\.token) == [Token(rawValue: 7)])
        #expect(events.first?.readiness.contains(.readable) == true)
        try backend.unregister(pipe.readEnd, token: Token(rawValue: 7))
    }

    @Test("readiness is level-triggered: an unread descriptor is reported by every wait", arguments: backends)
    func levelTriggered(_ kind: BackendKind) throws {
        let backend = try kind.factory.make()
        let pipe = try Pipe()
        defer { pipe.close() }
        try backend.register(pipe.readEnd, token: Token(rawValue: 1), interest: .readable)
        pipe.fill()
        var events: [ReadyEvent] = []
        for _ in 0..<3 {
            try waitOut(backend, timeout: generousDeadline, into: &events)
            #expect(events.map(\.token) == [Token(rawValue: 1)])
        }
        pipe.drain()
        try waitOut(backend, timeout: .zero, into: &events)
        #expect(events.isEmpty)
        try backend.unregister(pipe.readEnd, token: Token(rawValue: 1))
    }

    @Test("a wait with nothing ready never returns before its timeout", arguments: backends)
    func timeoutNeverEarly(_ kind: BackendKind) throws {
        let backend = try kind.factory.make()
        var events: [ReadyEvent] = []
        for micros in [1, 150, 1_000, 2_500] {
            let timeout = Duration.microseconds(micros) + .nanoseconds(1)
            let start = ContinuousClock.now
            try waitOut(backend, timeout: timeout, into: &events)
            let elapsed = ContinuousClock.now - start
            #expect(elapsed >= timeout, "waited \(elapsed) for a timeout of \(timeout)")
            #expect(events.isEmpty)
        }
    }

    @Test("a zero timeout polls and returns", arguments: backends)
    func zeroPolls(_ kind: BackendKind) throws {
        let backend = try kind.factory.make()
        var events: [ReadyEvent] = [ReadyEvent(token: Token(rawValue: 99), readiness: .readable)]
        try waitOut(backend, timeout: .zero, into: &events)
        #expect(events.isEmpty) // The buffer is cleared, then filled.
    }

    @Test("a wake from another thread ends a wait without timeout", arguments: backends)
    func wakeFromAnotherThread(_ kind: BackendKind) throws {
        let backend = try kind.factory.make()
        let waker = backend.waker
        let started = Latch()
        try spawnThread {
            started.wait()
            waker.wake()
        }
        started.open()
        var events: [ReadyEvent] = []
        try waitOut(backend, timeout: nil, into: &events)
        #expect(events.isEmpty) // The waker itself is not an event.
    }

    @Test("a wake posted before the wait is not lost; several coalesce into one", arguments: backends)
    func wakeBeforeWait(_ kind: BackendKind) throws {
        let backend = try kind.factory.make()
        backend.waker.wake()
        backend.waker.wake()
        var events: [ReadyEvent] = []
        #expect(try waitOut(backend, timeout: generousDeadline, into: &events))
        // Consumed, and coalesced: the next wait sleeps its whole timeout, with no wake.
        let start = ContinuousClock.now
        #expect(try !waitOut(backend, timeout: .milliseconds(5), into: &events))
        #expect(ContinuousClock.now - start >= .milliseconds(5))
    }

    @Test("after unregister a descriptor is not reported, even when ready", arguments: backends)
    func unregisterSilences(_ kind: BackendKind) throws {
        let backend = try kind.factory.make()
        let pipe = try Pipe()
        defer { pipe.close() }
        try backend.register(pipe.readEnd, token: Token(rawValue: 3), interest: .readable)
        pipe.fill()
        try backend.unregister(pipe.readEnd, token: Token(rawValue: 3))
        var events: [ReadyEvent] = []
        try waitOut(backend, timeout: .milliseconds(2), into: &events)
        #expect(events.isEmpty)
    }

    @Test("modify changes the interest and the token", arguments: backends)
    func modify(_ kind: BackendKind) throws {
        let backend = try kind.factory.make()
        let pipe = try Pipe()
        defer { pipe.close() }
        try backend.register(pipe.writeEnd, token: Token(rawValue: 10), interest: .readable)
        var events: [ReadyEvent] = []
        try waitOut(backend, timeout: .zero, into: &events)
        #expect(events.isEmpty)
        try backend.modify(pipe.writeEnd, token: Token(rawValue: 11), interest: .writable)
        try waitOut(backend, timeout: generousDeadline, into: &events)
        #expect(events.map(\.token) == [Token(rawValue: 11)])
        #expect(events.first?.readiness.contains(.writable) == true)
        try backend.unregister(pipe.writeEnd, token: Token(rawValue: 11))
    }

    @Test("unregistering a descriptor that was already closed is not an error", arguments: backends)
    func unregisterClosed(_ kind: BackendKind) throws {
        let backend = try kind.factory.make()
        let pipe = try Pipe()
        try backend.register(pipe.readEnd, token: Token(rawValue: 4), interest: .readable)
        pipe.close()
        try backend.unregister(pipe.readEnd, token: Token(rawValue: 4))
        var events: [ReadyEvent] = []
        try waitOut(backend, timeout: .zero, into: &events)
        #expect(events.isEmpty)
    }
}
