import Glibc
import RunLoopKit
import RunLoopKitBackendConformance

// The three ways a test runs code somewhere else than its own task, each bounded by a deadline
// that fails the test, naming the caller's line, instead of hanging it:
//
// 1. ``onLoopThread(_:within:fileID:line:_:)``: a body on a new thread that owns a fresh loop of
//    a given backend; awaits the body's value, the thread joined (so the loop torn down).
// 2. ``offThePool(within:fileID:line:_:)``: a synchronous body off Swift's cooperative pool, on
//    a plain thread; awaits its value.
// 3. ``TestThread``: starts a thread; ``TestThread/join(within:)`` joins it under a deadline.
//
// Why off the pool: Swift Testing runs every test on the cooperative pool, one thread per CPU. A
// test that blocks one of them (joining threads, waiting for a loop, running one) holds up every
// async test, whose continuations then wait for a thread for minutes, past their deadlines (on a
// two-CPU machine two such tests starved the suite for over 60 s). So a blocking wait is made in
// `offThePool`, and async work that must progress prefers a loop's executor.

/// A body or thread that did not finish within its deadline: the test fails with this error,
/// which names the way it was run and the caller's line. The body's thread is left behind.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public let what: String
    public let deadline: Duration
    public let fileID: String
    public let line: Int

    public init(_ what: String, deadline: Duration, fileID: String, line: Int) {
        (self.what, self.deadline, self.fileID, self.line) = (what, deadline, fileID, line)
    }

    public var description: String { "\(what) (\(fileID):\(line)) did not finish within \(deadline)" }
}

/// 1. Runs `body` on a new thread that owns a new loop of `backend` (on this run's time:
/// ``TestLoopTime``), joins the thread (so the
/// loop has been torn down when this returns) and returns the body's value; throws what `body`
/// or the loop's creation threw, or ``DeadlineExceeded`` naming the caller's line when the
/// thread has not finished within `deadline` (it is then left behind).
///
/// Each test owns its thread and its loop. It takes one of ``offThePool(within:fileID:line:_:)``'s
/// slots while the loop runs: hundreds of loops started at once would starve the tests that bound
/// a time (a timer under a signal storm, the stall monitor), so a test computes the instants it
/// checks on the loop's thread, not before it asks for one.
public func onLoopThread<T: Sendable>(
    _ backend: BackendKind, within deadline: Duration = generousDeadline, fileID: String = #fileID,
    line: Int = #line, _ body: @escaping @Sendable (Loop) throws -> T
) async throws -> T {
    // The join below names the caller first; the pool's deadline only backs it up.
    try await offThePool(within: deadline + .seconds(60), fileID: fileID, line: line) {
        let outcome = Lock<Result<T, any Error>?>(nil)
        let thread = try TestThread(name: "loop") {
            outcome.withLock { $0 = Result { try body(try TestLoopTime.makeLoop(backend)) } }
        }
        guard thread.join(within: deadline) else {
            throw DeadlineExceeded("onLoopThread's body", deadline: deadline, fileID: fileID, line: line)
        }
        return try outcome.withLock { $0! }.get()
    }
}

/// 2. Runs the synchronous `body` on a thread of its own and returns its value, holding none of
/// Swift's cooperative threads meanwhile; throws what `body` threw, or ``DeadlineExceeded`` naming
/// the caller's line when it has not returned within `deadline` (its thread is then left behind).
///
/// The body is a task that inherits the test's task-local values (its expectations are recorded
/// against the test), executing on a new thread through a task executor preference. At most one
/// body per CPU runs at once, as when they ran on the pool: the others wait, suspended, in the
/// order they came. A body that makes a loop for its thread (`Loop.current`) leaves it to be torn
/// down when that thread ends, just after this returns.
@discardableResult
public func offThePool<T: Sendable>(
    within deadline: Duration = generousDeadline, fileID: String = #fileID, line: Int = #line,
    _ body: sending @escaping () throws -> T
) async throws -> T {
    await OffThePoolSlots.shared.acquire()
    defer { OffThePoolSlots.shared.release() }
    let executor = try OwnThreadExecutor.start()
    let task = Task(executorPreference: executor) {
        defer { executor.finish() }
        return try body()
    }
    let outcome = OneShot<Result<T, any Error>>()
    let timer = Task {
        // Cancelled once the body returned: then it must not answer (the body has).
        guard (try? await Task.sleep(for: deadline)) != nil else { return }
        outcome.deliver(.failure(DeadlineExceeded("offThePool's body", deadline: deadline, fileID: fileID, line: line)))
    }
    Task {
        outcome.deliver(await task.result)
        timer.cancel()
    }
    return try await outcome.value.get()
}

/// 3. A thread a test starts (a poster, a waker, a loop of its own) and joins under a deadline:
/// the conformance kit's helper thread. Joining returns only once the thread has exited, after its
/// thread-specific destructors ran, so after the teardown of the loop it had.
///
/// A thread nobody joins (a poster whose effects the test waits for some other way) is detached
/// when its last reference goes. Join at most once, and never on the cooperative pool: a blocking
/// wait belongs in ``offThePool(within:fileID:line:_:)``.
public final class TestThread: Sendable {
    private let helper: Helper
    private let joined = Lock(false)

    /// Opened when the body returned (the thread's teardown follows at once).
    public let finished: Latch

    /// Starts a thread named `name` running `body`.
    public init(name: String = "test", _ body: @escaping @Sendable () -> Void) throws {
        helper = try Helper(name: name, body)
        finished = Latch(helper.finished)
    }

    deinit {
        if !joined.withLock({ $0 }) { helper.detach() }
    }

    /// Waits until the body returned, then joins the thread.
    /// - Returns: false if the body did not return within `deadline`; the thread is then left
    ///   running, and the caller's expectation fails.
    @discardableResult
    public func join(within deadline: Duration = generousDeadline) -> Bool {
        joined.withLock { $0 = true }
        return helper.join(within: deadline)
    }
}

/// The bodies ``offThePool(within:fileID:line:_:)`` lets run at once (one per CPU), handed out
/// first come, first served; a caller waiting for one is suspended, holding no thread.
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
