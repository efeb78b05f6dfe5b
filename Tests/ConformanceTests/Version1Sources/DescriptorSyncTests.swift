import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Objects › Items: what the loop asks its backend to watch changes only where the sources
/// changed. A mode switch keeps the registrations of descriptors that both modes watch, and
/// removing one source of many touches only its descriptor — each checked by counting the
/// backend's register and unregister calls.
@Suite("Descriptor registrations")
struct DescriptorSyncTests {
    @Test(
        "a nested run in another mode registers only that mode's own descriptors, and the outer mode gets back only what it lost",
        arguments: backends)
    func modeSwitchKeepsSharedDescriptors(_ backend: BackendKind) async throws {
        let pipes = try (0..<5).map { _ in try Pipe() }
        defer { pipes.forEach { $0.close() } }
        let calls = try await onCountingLoopThread(backend) { loop, counter -> [String] in
            let tracking = Loop.Mode("tracking")
            var sources: [Loop.Source] = []
            defer { sources.forEach { $0.invalidate() } }
            // Three descriptors in both modes, one in each mode alone.
            for pipe in pipes[0..<3] {
                let source = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in }
                loop.add(source, to: .default)
                loop.add(source, to: tracking)
                sources.append(source)
            }
            let defaultOnly = try Loop.Source(fileDescriptor: pipes[3].readEnd) { _ in }
            loop.add(defaultOnly, to: .default)
            sources.append(defaultOnly)
            let trackingOnly = try Loop.Source(fileDescriptor: pipes[4].readEnd) { _ in }
            loop.add(trackingOnly, to: tracking)
            sources.append(trackingOnly)

            let calls = Trace()
            loop.run(.default, timeout: .zero)
            calls("default: \(counter.take())")
            // Nested, as a UI's tracking loop runs inside a callout of the default mode.
            loop.perform(in: [.default]) {
                loop.run(tracking, timeout: .zero)
                calls("tracking: \(counter.take())")
            }
            loop.run(.default, timeout: .zero)
            calls("default again: \(counter.take())")
            return calls.all
        }
        #expect(
            calls == [
                "default: 4 registered, 0 unregistered",
                "tracking: 1 registered, 1 unregistered",
                "default again: 1 registered, 1 unregistered",
            ])
    }

    @Test("removing one of 200 descriptor sources unregisters its descriptor and touches no other", arguments: backends)
    func removingOneSourceTouchesOnlyItsDescriptor(_ backend: BackendKind) async throws {
        // 200 descriptors naming one pipe: tests run in parallel under a descriptor limit.
        let pipe = try Pipe()
        let descriptors = (0..<200).map { _ in dup(pipe.readEnd) }
        defer {
            descriptors.forEach { close($0) }
            pipe.close()
        }
        try #require(!descriptors.contains(-1))
        let calls = try await onCountingLoopThread(backend) { loop, counter -> [String] in
            let sources = try descriptors.map { fd in try Loop.Source(fileDescriptor: fd) { _ in } }
            defer { sources.forEach { $0.invalidate() } }
            for source in sources { loop.add(source, to: .default) }
            var calls: [String] = []
            loop.run(.default, timeout: .zero)
            calls.append("added: \(counter.take())")
            sources[100].invalidate()
            calls.append("invalidated one: \(counter.take())")
            loop.remove(sources[101], from: .default)
            calls.append("removed one: \(counter.take())")
            loop.run(.default, timeout: .zero)
            calls.append("next pass: \(counter.take())")
            loop.add(sources[101], to: .default)
            loop.run(.default, timeout: .zero)
            calls.append("added back: \(counter.take())")
            return calls
        }
        #expect(
            calls == [
                "added: 200 registered, 0 unregistered",
                "invalidated one: 0 registered, 1 unregistered",
                "removed one: 0 registered, 1 unregistered",
                "next pass: 0 registered, 0 unregistered",
                "added back: 1 registered, 0 unregistered",
            ])
    }

    @Test(
        "a second source on a watched descriptor registers that descriptor afresh for both, and its removal again for one",
        arguments: backends)
    func secondSourceOnOneDescriptor(_ backend: BackendKind) async throws {
        try await withPipe { pipe in
            let trace = try await onCountingLoopThread(backend) { loop, counter -> [String] in
                let trace = Trace()
                let first = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in trace("first") }
                let second = try Loop.Source(fileDescriptor: pipe.readEnd) { _ in trace("second") }
                defer { first.invalidate() }
                loop.add(first, to: .default)
                loop.run(.default, timeout: .zero)
                trace("one source: \(counter.take())")
                loop.add(second, to: .default)
                pipe.fill()
                loop.run(.default, timeout: .zero)
                trace("two sources: \(counter.take())")
                second.invalidate()
                loop.run(.default, timeout: .zero)
                trace("one again: \(counter.take())")
                pipe.drain()
                return trace.all
            }
            #expect(
                trace == [
                    "one source: 1 registered, 0 unregistered",
                    "first", "second",
                    "two sources: 1 registered, 1 unregistered",
                    "first",
                    "one again: 1 registered, 1 unregistered",
                ])
        }
    }
}

/// Counts the register and unregister calls a loop makes, passing each on to a real backend.
private final class RegistrationCounter: Sendable {
    private let counts = Mutex((registered: 0, unregistered: 0))

    func registered() { counts.withLock { $0.registered += 1 } }
    func unregistered() { counts.withLock { $0.unregistered += 1 } }

    /// The counts since the last call, as "R registered, U unregistered".
    func take() -> String {
        counts.withLock { counts in
            defer { counts = (0, 0) }
            return "\(counts.registered) registered, \(counts.unregistered) unregistered"
        }
    }
}

/// A backend that is `inner` in every respect, and counts registrations.
private final class CountingBackend: WrappingBackend {
    let inner: any Backend
    let counter: RegistrationCounter

    init(_ inner: any Backend, counter: RegistrationCounter) {
        self.inner = inner
        self.counter = counter
    }

    var kind: BackendKind { inner.kind }

    func register(_ descriptor: Int32, token: Token, interest: Interest) throws(SystemError) {
        try inner.register(descriptor, token: token, interest: interest)
        counter.registered()
    }

    func unregister(_ descriptor: Int32, token: Token) throws(SystemError) {
        try inner.unregister(descriptor, token: token)
        counter.unregistered()
    }
}

/// Runs `body` on a new thread whose loop's backend is `backend` wrapped in a counter.
private func onCountingLoopThread<T: Sendable>(
    _ backend: BackendKind,
    _ body: @escaping @Sendable (Loop, RegistrationCounter) throws -> T
) async throws -> T {
    let counter = RegistrationCounter()
    let factory = BackendFactory(kind: backend) { CountingBackend(try backend.factory.make(), counter: counter) }
    return try await offThePool {
        try body(try Loop.current(creatingWith: factory), counter)
    }
}
