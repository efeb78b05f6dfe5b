import Glibc
import RunLoopKit
import Synchronization
import Testing

/// Timing › wakeups are never lost: the eventfd waker that the epoll and libevent backends use.
@Suite("Eventfd waker")
struct EventfdWakerTests {
    @Test("a wake racing with consume is never swallowed: afterwards one wake makes the eventfd readable")
    func wakeRacingWithConsume() throws {
        let waker = try EventfdWaker()
        let done = Atomic<Bool>(false)
        try spawnThread {
            for _ in 0..<300_000 { waker.wake() }
            done.store(true, ordering: .releasing)
        }
        // The loop's side: consume whenever the eventfd is readable, as a backend does.
        while !done.load(ordering: .acquiring) {
            if isReadable(waker.descriptor) { waker.consume() }
        }
        if isReadable(waker.descriptor) { waker.consume() }
        // A waker whose flag says "pending" over an empty eventfd would never write again.
        waker.wake()
        #expect(isReadable(waker.descriptor))
    }

    private func isReadable(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }
}
