import Dispatch
import Glibc
import RunLoopKit
import TestSupport
import Testing

/// Tests/README.md › Backends: bad input to the `Backend` protocol's methods, called directly
/// (as code that builds on a backend, or a new backend's author, would). The backends do not
/// all answer alike; each test states every backend's answer.
@Suite("Bad input to a backend")
struct BadInputBackendTests {
    @Test("register(_:token:interest:) with a negative descriptor", arguments: backends)
    func registerNegative(_ backend: BackendKind) async throws {
        try await offThePool {
            let made = try backend.factory.make()
            #expect(throws: SystemError(registrationOperation(backend), errno: EBADF)) {
                try made.register(-1, token: Token(rawValue: 1), interest: .readable)
            }
        }
    }

    @Test("register(_:token:interest:) of a closed descriptor", arguments: backends)
    func registerClosed(_ backend: BackendKind) async throws {
        try await offThePool {
            let made = try backend.factory.make()
            let closed: Int32 = 1_000_000
            #expect(throws: SystemError(registrationOperation(backend), errno: EBADF)) {
                try made.register(closed, token: Token(rawValue: 1), interest: .readable)
            }
        }
    }

    @Test("register(_:token:interest:) of a regular file", arguments: backends)
    func registerRegularFile(_ backend: BackendKind) async throws {
        try await offThePool {
            let made = try backend.factory.make()
            let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
            try #require(fd >= 0)
            defer { close(fd) }
            #expect(throws: SystemError(registrationOperation(backend), errno: EPERM)) {
                try made.register(fd, token: Token(rawValue: 1), interest: .readable)
            }
        }
    }

    @Test("register(_:token:interest:) of a descriptor already registered", arguments: backends)
    func registerTwice(_ backend: BackendKind) async throws {
        let made = try backend.factory.make()
        let pipe = try Pipe()
        defer { pipe.close() }
        try made.register(pipe.readEnd, token: Token(rawValue: 1), interest: .readable)
        let operation = registrationOperation(backend)
        #expect(throws: SystemError(operation, errno: EEXIST)) {
            try made.register(pipe.readEnd, token: Token(rawValue: 2), interest: .readable)
        }
        try made.unregister(pipe.readEnd, token: Token(rawValue: 1))
    }

    @Test("unregister(_:token:) of a descriptor never registered is not an error", arguments: backends)
    func unregisterUnregistered(_ backend: BackendKind) async throws {
        try await offThePool {
            let made = try backend.factory.make()
            let pipe = try Pipe()
            defer { pipe.close() }
            try made.unregister(pipe.readEnd, token: Token(rawValue: 1))
            try made.unregister(-1, token: Token(rawValue: 1))
        }
    }

    @Test("wait(timeout:into:) with a negative timeout polls", arguments: backends)
    func waitNegativeTimeout(_ backend: BackendKind) async throws {
        try await offThePool {
            let made = try backend.factory.make()
            var events: [ReadyEvent] = []
            let start = ContinuousClock.now
            try made.wait(timeout: .zero - .seconds(3600), into: &events)
            #expect(events == [])
            #expect(ContinuousClock.now - start < generousDeadline)
        }
    }

    @Test("Duration helpers clamp: negative to zero, enormous to the type's limit")
    func durationClamps() async throws {
        try await offThePool {
            #expect((Duration.zero - .seconds(1)).nanosecondsRoundedUp == 0)
            #expect(Duration.seconds(Int64.max).nanosecondsRoundedUp == Int64.max)
            #expect(Duration.seconds(Int64.max).millisecondsRoundedUp == Int32.max)
            // Beyond Int64.max seconds, where `Duration.components` itself would trap.
            #expect((Duration.seconds(Int64.max) + .seconds(Int64.max)).nanosecondsRoundedUp == Int64.max)
            #expect(Duration.nanoseconds(0.5).nanosecondsRoundedUp == 1)
            let spec = (Duration.zero - .seconds(5)).timespecRoundedUp
            #expect(spec.tv_sec == 0 && spec.tv_nsec == 0)
        }
    }

    @Test("BackendKind(rawValue:) of a name not in the build is nil")
    func unknownKind() async throws {
        try await offThePool {
            #expect(BackendKind(rawValue: "kqueue") == nil)
            #expect(BackendKind(rawValue: "") == nil)
        }
    }
}
