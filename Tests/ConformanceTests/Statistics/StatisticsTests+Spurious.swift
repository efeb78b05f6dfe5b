import RunLoopKit
import Synchronization
import TestSupport
import Testing

extension StatisticsTests {
    /// The positive control of every `spuriousWakeups == 0`: a sleep that ends early for no
    /// reason the loop can act on — its backend reports an event under a token nothing is
    /// registered with, so no timer fires, no source is handled, nobody woke the loop and the
    /// wait's end was not reached — is counted once, as spurious (as `Loop.Statistics` and
    /// ObservingALoop.md define it). The backend is a built-in one with that one event added
    /// to one sleep.
    @Test("a sleep that ends with nothing to do counts as exactly one spurious wakeup", arguments: backends)
    func spuriousWakeupCounted(_ inner: BackendKind) async throws {
        let injector = StaleEventInjector()
        let factory = BackendFactory(kind: StaleEventBackend.kind) {
            StaleEventBackend(try inner.factory.make(), injector)
        }
        let (before, after, result) = try await offThePool {
            let loop = try Loop.current(creatingWith: factory)
            let (keepAlive, _) = try keepAliveSource()
            loop.add(keepAlive, to: .default)
            let before = loop.statistics
            injector.armed.store(true, ordering: .releasing)
            _ = try TestThread {
                // The loop sleeps again after the sleep with the stale event: another thread's
                // stop ends that second sleep (a wakeup by another thread), and the run.
                _ = injector.sleepingAgain.wait(for: hangDeadline)
                loop.stop()
            }
            let result = loop.run(timeout: generousDeadline)
            keepAlive.invalidate()
            return (before, loop.statistics, result)
        }
        #expect(injector.sleepingAgain.isOpen, "the loop never slept again after the sleep that ended for nothing")
        #expect(result == .stopped)
        #expect(before.wakeups.total == 0)
        #expect(after.wakeups[.spurious] == 1, "the sleep that ended for nothing")
        #expect(after.wakeups[.woken] == 1, "the stop")
        #expect(after.wakeups.total == 2)
    }
}

/// When ``StaleEventBackend`` adds its event, and when the loop slept again after it.
private final class StaleEventInjector: Sendable {
    /// Set once the loop is ready: the next wait that sleeps gets the stale event.
    let armed = Atomic<Bool>(false)
    /// Whether the stale event was reported (by the one wait that reported it).
    let injected = Atomic<Bool>(false)
    /// Opened as the loop enters the first sleep after the one that got the stale event.
    let sleepingAgain = Latch()
}

/// A built-in backend, but the first wait that may sleep once armed returns at once with an
/// event under a token no descriptor is registered with (as a late event of an unregistered
/// descriptor would be): the loop finds nothing to do.
private final class StaleEventBackend: WrappingBackend {
    static let kind = BackendKind(name: "stale-event")
    let inner: any Backend
    private let injector: StaleEventInjector

    init(_ inner: any Backend, _ injector: StaleEventInjector) {
        self.inner = inner
        self.injector = injector
    }

    var kind: BackendKind { Self.kind }

    func wait(timeout: Duration?, into events: inout [ReadyEvent]) throws(SystemError) {
        // A poll (a zero timeout) is not a sleep: only a wait that may sleep is changed.
        if timeout != .zero, injector.armed.load(ordering: .acquiring) {
            if !injector.injected.exchange(true, ordering: .acquiringAndReleasing) {
                events.removeAll(keepingCapacity: true)
                events.append(ReadyEvent(token: Token(rawValue: .max), readiness: .readable))
                return
            }
            injector.sleepingAgain.open()
        }
        try inner.wait(timeout: timeout, into: &events)
    }
}
