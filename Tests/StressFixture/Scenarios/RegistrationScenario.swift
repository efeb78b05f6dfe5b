import Glibc
import RunLoopKit
import TestSupport

/// Nothing left registered, as the kernel tells it (see the kernel registration tests in
/// ConformanceTests): a process of its own, so that its descriptors can be counted exactly.
enum RegistrationScenario {
    /// Sockets watched at once.
    static let sockets = 8

    /// Sources on sockets are registered, then removed (half invalidated, half removed from
    /// their mode): the kernel must hold every registration while they are in the loop and none
    /// once they are out, and the peer of each socket must read end of file once the test closes
    /// its end. Then a loop is torn down (its thread exits) with its sources still registered:
    /// the peers read end of file again, and the process's descriptors are back where they were.
    static func removeThenTearDown(_ backend: BackendKind) throws {
        let watchdog = try Watchdog("the kernel registration scenario on \(backend)")
        defer { watchdog.stop() }
        // A first loop opens what the process keeps for good (the libraries' own descriptors).
        try onOwnThread { _ = try Loop.current(backend: backend).run(timeout: .zero) }
        let before = DescriptorSnapshot.take()

        try onOwnThread { try removeEach(backend) }
        watchdog.beat()
        let afterRemoval = DescriptorSnapshot.take()
        check(
            afterRemoval == before,
            "descriptors after a loop whose sources were removed: \(before.count) → \(afterRemoval.count), new: \(afterRemoval.added(since: before))"
        )

        let pairs = try (0..<sockets).map { _ in try socketPair() }
        try onOwnThread { try leaveRegistered(backend, pairs.map(\.0)) }
        watchdog.beat()
        for (ours, _) in pairs { close(ours) }
        expectEndOfFile(pairs.map(\.1), "after the loop's teardown")
        for (_, peer) in pairs { close(peer) }
        let afterTeardown = DescriptorSnapshot.take()
        check(
            afterTeardown == before,
            "descriptors after a loop torn down with its sources registered: \(before.count) → \(afterTeardown.count), new: \(afterTeardown.added(since: before))"
        )
        report("kernel registrations on \(backend): descriptors \(before.count) → \(afterTeardown.count)")
    }

    private static func removeEach(_ backend: BackendKind) throws {
        let loop = try Loop.current(backend: backend)
        let kernel = try KernelRegistrations.find(for: loop)
        let empty = try kernel.registrations()
        check(empty.isEmpty, "\(kernel) holds registrations before any source was added: \(empty)")
        let pairs = try (0..<sockets).map { _ in try socketPair() }
        let sources = try pairs.map { pair in try Loop.Source(fileDescriptor: pair.0) { _ in } }
        for source in sources { loop.add(source, to: .default) }
        // A pass registers the sources' descriptors.
        _ = loop.run(timeout: .zero)
        // The check sees what it must: every registration while the sources are in the loop.
        let held = try kernel.registrations()
        check(
            held.count == sockets, "\(kernel) holds \(held.count) registrations for \(sockets) sources: \(held)")
        for (index, source) in sources.enumerated() {
            if index.isMultiple(of: 2) { source.invalidate() } else { loop.remove(source, from: .default) }
        }
        check(loop.registeredDescriptorCount == 0, "Core counts \(loop.registeredDescriptorCount) registered")
        let left = try kernel.registrations()
        check(left.isEmpty, "\(kernel) still holds \(left.count) registrations after every source left: \(left)")
        for (ours, _) in pairs { close(ours) }
        expectEndOfFile(pairs.map(\.1), "after their sources were removed")
        for (_, peer) in pairs { close(peer) }
    }

    /// Watches `descriptors` and returns (ending the thread) with their sources still in the loop.
    private static func leaveRegistered(_ backend: BackendKind, _ descriptors: [Int32]) throws {
        let loop = try Loop.current(backend: backend)
        let kernel = try KernelRegistrations.find(for: loop)
        for descriptor in descriptors { loop.add(try Loop.Source(fileDescriptor: descriptor) { _ in }, to: .default) }
        _ = loop.run(timeout: .zero)
        let held = try kernel.registrations()
        check(
            held.count == descriptors.count,
            "\(kernel) holds \(held.count) registrations for \(descriptors.count) sources: \(held)")
    }

    /// Every peer reads end of file (within the generous deadline, all together): nothing else
    /// holds the other end open. An io_uring poll request left behind would.
    private static func expectEndOfFile(_ peers: [Int32], _ when: String) {
        var entries = peers.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let deadline = ContinuousClock.now + generousDeadline
        while entries.contains(where: { $0.fd >= 0 }), ContinuousClock.now < deadline {
            for index in entries.indices { entries[index].revents = 0 }
            guard poll(&entries, nfds_t(entries.count), 100) >= 0 else { continue }
            for index in entries.indices where entries[index].revents != 0 {
                var byte: UInt8 = 0
                let count = read(entries[index].fd, &byte, 1)
                check(count == 0, "the peer \(entries[index].fd) read \(count) instead of end of file \(when)")
                entries[index].fd = -1
            }
        }
        let open = entries.filter { $0.fd >= 0 }.map(\.fd)
        check(open.isEmpty, "peers \(open) never read end of file \(when): something still holds their sockets")
    }

    /// Runs `body` on a thread of its own (with its loop torn down when it ends), and waits.
    private static func onOwnThread(_ body: @escaping @Sendable () throws -> Void) throws {
        let thread = try TestThread {
            do { try body() } catch { fail("the scenario threw \(error)") }
        }
        // Longer than the body's own waits (end of file: the generous deadline), so that a
        // body that waits them out still reports what it saw.
        check(thread.join(within: generousDeadline * 3), "the scenario's thread did not finish")
    }
}
