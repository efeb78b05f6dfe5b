import RunLoopKit
import Testing

/// Nothing left registered, as the kernel tells it rather than Core's own count: the epoll
/// instance's entries (epoll, libevent), the ring's poll requests (io_uring), the peers of
/// closed sockets reading end of file (a poll request left behind holds its socket open), and
/// the process's descriptors. In a process of its own (`StressFixture`, scenario
/// `RegistrationScenario`), so that the descriptors are counted exactly. The kernel-reading
/// helpers are `Tests/TestSupport/KernelRegistrations.swift`.
@Suite("Kernel registrations")
struct KernelRegistrationTests {
    @Test(
        "sources removed, and a loop torn down with its sources registered, leave nothing in the kernel: no epoll entry or poll request, every peer reads end of file, the descriptors are back",
        arguments: backends)
    func removalAndTeardown(_ backend: BackendKind) async throws {
        try await StressFixtureRun.run("kernel-registrations", backend).expectPassed()
    }
}
