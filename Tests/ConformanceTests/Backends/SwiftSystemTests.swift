import Glibc
import RunLoopKit
import Synchronization
import SystemPackage
import TestSupport
import Testing

/// swift-system's types in the public API: descriptors as `FileDescriptor`, system errors
/// carrying `Errno`.
@Suite("swift-system types")
struct SwiftSystemTests {
    @Test("a pipe made as FileDescriptors drives a descriptor source", arguments: backends)
    func sourceOnFileDescriptor(_ backend: BackendKind) async throws {
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        defer {
            try? readEnd.close()
            try? writeEnd.close()
        }
        // FileDescriptor is not Sendable: the closures keep its number and rebuild it.
        let (reading, writing) = (readEnd.rawValue, writeEnd.rawValue)
        let (result, trace) = try await traced(backend) { loop, trace in
            let source = try Loop.Source(fileDescriptor: FileDescriptor(rawValue: reading)) { readiness in
                var buffer = [UInt8](repeating: 0, count: 8)
                let count = try? buffer.withUnsafeMutableBytes { try FileDescriptor(rawValue: reading).read(into: $0) }
                trace("\(readiness) \(count ?? -1) bytes")
            }
            loop.add(source, to: .default)
            defer { source.invalidate() }
            _ = try FileDescriptor(rawValue: writing).writeAll([1, 2, 3])
            return loop.run(.default, timeout: generousDeadline, returnAfterSourceHandled: true)
        }
        #expect(result == .handledSource)
        #expect(trace.all == ["[readable] 3 bytes"])
    }

    @Test("a FileDescriptor that is not open is refused like its number", arguments: [-1, 1_000_000] as [Int32])
    func refusedFileDescriptor(_ number: Int32) async throws {
        try await offThePool { () throws in
            let byNumber = #expect(throws: ArgumentError.self) {
                try Loop.Source(fileDescriptor: number) { _ in }
            }
            let byDescriptor = #expect(throws: ArgumentError.self) {
                try Loop.Source(fileDescriptor: FileDescriptor(rawValue: number)) { _ in }
            }
            #expect(byNumber != nil && byNumber == byDescriptor)
            #expect(byDescriptor?.argument == "fileDescriptor")
            #expect(byDescriptor?.value == "\(number)")
        }
    }

    @Test("a backend's FileDescriptor overloads register and unregister", arguments: backends)
    func backendOverloads(_ backend: BackendKind) async throws {
        try await offThePool {
            let made = try backend.factory.make()
            let (readEnd, writeEnd) = try FileDescriptor.pipe()
            defer {
                try? readEnd.close()
                try? writeEnd.close()
            }
            try made.register(writeEnd, token: Token(rawValue: 1), interest: .readable)
            var events: [ReadyEvent] = []
            try waitOut(made, timeout: .zero, into: &events)
            #expect(events.isEmpty)
            try made.unregister(writeEnd, token: Token(rawValue: 1))
            try made.register(writeEnd, token: Token(rawValue: 2), interest: .writable)
            try waitOut(made, timeout: generousDeadline, into: &events)
            #expect(events.map(\.token) == [Token(rawValue: 2)])
            try made.unregister(writeEnd, token: Token(rawValue: 2))
            try waitOut(made, timeout: .zero, into: &events)
            #expect(events.isEmpty)
        }
    }

    @Test("registering a closed descriptor throws SystemError with Errno.badFileDescriptor", arguments: backends)
    func badFileDescriptor(_ backend: BackendKind) async throws {
        try await offThePool {
            let made = try backend.factory.make()
            let error = #expect(throws: SystemError.self) {
                try made.register(FileDescriptor(rawValue: -1), token: Token(rawValue: 1), interest: .readable)
            }
            #expect(error?.errno == .badFileDescriptor)
            #expect(error?.errno.rawValue == EBADF)
            let operation = registrationOperation(backend)
            #expect(error?.operation == operation)
            #expect(error?.description == "\(operation) failed: Bad file descriptor (EBADF, errno 9)")
        }
    }

    @Test("SystemError: the Errno and the C errno initialisers agree; the description names both")
    func systemErrorValues() async throws {
        try await offThePool {
            #expect(SystemError("read", errno: EAGAIN) == SystemError("read", errno: .resourceTemporarilyUnavailable))
            #expect(SystemError("read", errno: EAGAIN).errno == .wouldBlock)
            #expect(
                "\(SystemError("epoll_create1", errno: .tooManyOpenFiles))"
                    == "epoll_create1 failed: Too many open files (EMFILE, errno 24)")
            // A number the C library has no name for keeps its number.
            #expect("\(SystemError("x", errno: 4_000))" == "x failed: Unknown error 4000 (errno 4000)")
        }
    }
}
