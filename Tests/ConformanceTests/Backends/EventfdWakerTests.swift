import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Timing › wakeups are never lost: the eventfd waker that the epoll and libevent backends use.
@Suite("Eventfd waker")
struct EventfdWakerTests {
    @Test("a wake racing with consume is never swallowed: afterwards one wake makes the eventfd readable")
    func wakeRacingWithConsume() async throws {
        try await offThePool {
            let waker = try EventfdWaker()
            let done = Atomic<Bool>(false)
            let finished = Latch()
            // One thread wakes without pause; every consume below is a chance for a wake to land
            // between the consume's two steps.
            _ = try TestThread {
                while !done.load(ordering: .acquiring) { waker.wake() }
                finished.open()
            }
            // The loop's side: consume whenever the eventfd is readable, as a backend does. A
            // waker whose flag says "pending" over an empty eventfd is never readable again: the
            // rounds stop counting, the time limit ends the loop, and the check below fails. (How
            // many rounds fit in the time depends on the machine's load, so the count itself is
            // not what is checked.)
            var rounds = 0
            let start = ContinuousClock.now
            while rounds < 100_000, ContinuousClock.now - start < .seconds(5) {
                if isReadable(waker.descriptor) {
                    waker.consume()
                    rounds += 1
                }
            }
            done.store(true, ordering: .releasing)
            finished.wait()
            if isReadable(waker.descriptor) { waker.consume() }
            // Swallowed, the waker would now be pending over an empty eventfd: this wake would
            // not write.
            waker.wake()
            #expect(
                isReadable(waker.descriptor),
                "after \(rounds) rounds of racing wakes, a wake no longer makes the eventfd readable")
        }
    }

    private func isReadable(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }
}
