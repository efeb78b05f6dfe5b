import Glibc
import RunLoopKit

/// Runs a test's blocking `body` on a thread of its own and returns what it returned,
/// holding none of Swift's cooperative threads meanwhile.
///
/// Every test shares the cooperative pool, which has one thread per CPU: a synchronous test
/// that blocks (joining threads, waiting for a loop, running one) holds one of them for as
/// long as it runs, and on a two-CPU machine two such tests stop every async test in the
/// process, whose continuations then wait for a thread for minutes (long enough to pass
/// their deadlines). So no test body runs synchronously on the pool: a test is `async`, and
/// what it does synchronously it does in here.
///
/// The body is the test's task (its expectations are recorded against the test, task-local
/// values are kept), executing on a new thread through a task executor preference. At most
/// one body per CPU runs at once, as when they ran on the pool: the others wait, suspended,
/// in the order they came. A body that makes a loop for its thread (`Loop.current`) leaves
/// it to be torn down when that thread ends, just after this returns.
@discardableResult
public func offThePool<T>(_ body: () throws -> T) async rethrows -> T {
    await OffThePoolSlots.shared.acquire()
    defer { OffThePoolSlots.shared.release() }
    let executor: OwnThreadExecutor
    do {
        executor = try OwnThreadExecutor.start()
    } catch {
        preconditionFailure("offThePool: no thread for a test's body: \(error)")
    }
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor) { try body() }
}

/// Runs `body` once one of the slots ``offThePool(_:)`` hands out is free, holding it
/// meanwhile: for a test helper that runs its blocking part on a thread of its own some other
/// way (`onLoopThread`), so that it waits off the pool and still counts against the bodies
/// that run at once. Waiting for a slot holds no thread.
public func withOffPoolSlot<T>(_ body: () async throws -> T) async rethrows -> T {
    await OffThePoolSlots.shared.acquire()
    defer { OffThePoolSlots.shared.release() }
    return try await body()
}

/// The bodies ``offThePool(_:)`` lets run at once (one per CPU), handed out first come, first
/// served; a caller waiting for one is suspended, holding no thread.
final class OffThePoolSlots: Sendable {
    static let shared = OffThePoolSlots(count: max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    private let state: Lock<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    init(count: Int) {
        state = Lock((count, []))
    }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
