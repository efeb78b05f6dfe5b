import Dispatch
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// How long a test waits for an event before it fails: generous, because a test thread on a
/// loaded two-core machine can be descheduled for a long while.
let generousDeadline: Duration = .seconds(30)

/// Runs `body` on a new thread that owns a new loop of `backend`, and returns its result.
///
/// Each test owns its thread and its loop; the loop is torn down when the thread exits. If the
/// body does not finish within ``generousDeadline`` the test fails (the thread is left behind).
func onLoopThread<T: Sendable>(
    _ backend: BackendKind,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable (Loop) throws -> T
) async throws -> T {
    let outcome = Lock<Result<T, any Error>?>(nil)
    let done = Latch()
    try spawnThread {
        do {
            let loop = try Loop.current(backend: backend)
            let value = try body(loop)
            outcome.withLock { $0 = .success(value) }
        } catch {
            outcome.withLock { $0 = .failure(error) }
        }
        done.open()
    }
    guard done.wait(for: generousDeadline) else {
        Issue.record("the loop thread did not finish within \(generousDeadline)", sourceLocation: sourceLocation)
        throw TestTimeout()
    }
    return try outcome.withLock { $0! }.get()
}

struct TestTimeout: Error {}

/// Starts a detached pthread running `body`.
func spawnThread(_ body: @escaping @Sendable () -> Void) throws {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let result = pthread_create(&thread, nil, { pointer in
        Unmanaged<Box>.fromOpaque(pointer!).takeRetainedValue().body()
        return nil
    }, box)
    guard result == 0 else { throw SystemError("pthread_create", errno: result) }
    pthread_detach(thread)
}

/// A one-shot gate: `wait` blocks (without spinning) until `open` is called or time runs out.
final class Latch: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let opened = Atomic<Bool>(false)

    /// Opens the gate; later calls have no effect. Safe from any thread.
    func open() {
        if !opened.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }

    var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Waits until opened; false if `timeout` passed first.
    @discardableResult
    func wait(for timeout: Duration = generousDeadline) -> Bool {
        let nanos = Int(timeout.nanosecondsClampedToZero)
        guard semaphore.wait(timeout: .now() + .nanoseconds(nanos)) == .success else { return false }
        semaphore.signal() // Stay open for other waiters.
        return true
    }
}
