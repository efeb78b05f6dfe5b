import Dispatch
import Glibc
import RunLoopKit
import TestSupport
import Testing

/// Invariants debug builds check (release builds compile none of these checks): a lock taken
/// again by its holder, the lock order (`LockRank`), and the loop-thread-only state touched
/// from another thread. Each trap is run in a child process and its message read.
///
/// Debug builds only: a release run reports the suite skipped, with the reason (the build
/// configuration's sentinel, `BuildConfigurationTests`, fails a debug build without `DEBUG`).
@Suite(
    "Debug builds check the locks and the loop-thread state",
    .enabled(if: isDebugBuild, "release builds compile none of these checks"))
struct DebugInvariantTests {
    #if DEBUG
    @Test("taking a lock again on the thread that holds it traps instead of deadlocking")
    func relockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let lock = Lock(0)
            lock.withLock { _ in lock.withLock { _ in } }
        }
        #expect(text(of: result).contains("taken again by the thread that holds it"))
    }

    /// Each of Core's ranked locks, as the code makes it, taken while the loop's block-queue
    /// lock (the last rank) is held: every one must trap, naming both. A rank dropped from the
    /// lock taken lets it through; one dropped from the block-queue lock lets every case through
    /// (the held lock is not counted); a rank changed names the wrong lock.
    @Test(
        "taking any of Core's real locks while holding the block-queue lock traps, naming both",
        arguments: CoreLockForTesting.allCases.filter { $0 != .blockQueue })
    func lockOrderTrapsOnCoreLocks(_ lock: CoreLockForTesting) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [lock] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let loop = try Loop.current(backend: backends[0])
            let (inner, outer) = (loop.coreLock(lock), loop.coreLock(.blockQueue))
            outer { inner {} }
        }
        #expect(
            text(of: result).contains(
                "lock order broken: taking the \(Self.rankName(lock)) lock while holding the block queue lock"))
    }

    /// Core's real locks taken in the documented order, one of each rank (each item lock in
    /// turn), the block queue last: none traps (the order the code relies on is the order the
    /// ranks check).
    @Test("Core's real locks taken in order do not trap")
    func lockOrderKeptOnCoreLocks() async throws {
        try await offThePool {
            let loop = try Loop.current(backend: backends[0]) // This thread's, never run.
            var reached = 0
            for item: CoreLockForTesting in [.timer, .observer, .source] {
                let (backend, itemLock) = (loop.coreLock(.backend), loop.coreLock(item))
                let (state, queue) = (loop.coreLock(.loopState), loop.coreLock(.blockQueue))
                backend { itemLock { state { queue { reached += 1 } } } }
            }
            // The backend lock is recursive by design: a libevent callback removes a source.
            let backend = loop.coreLock(.backend)
            backend { backend { reached += 1 } }
            #expect(reached == 4)
        }
    }

    @Test("taking locks against the lock order traps, naming both")
    func lockOrderTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let state = Lock(0, rank: .loopState)
            let item = Lock(0, rank: .item)
            state.withLock { _ in item.withLock { _ in } }
        }
        #expect(
            text(of: result).contains(
                "taking the item (timer, source or observer) lock while holding the loop state lock"))
    }

    @Test("locks taken in order do not trap")
    func lockOrderKept() async throws {
        try await offThePool {
            let (item, state, queue) = (Lock(0, rank: .item), Lock(0, rank: .loopState), Lock(0, rank: .blockQueue))
            let sum = item.withLock { a in state.withLock { b in queue.withLock { c in a + b + c } } }
            #expect(sum == 0)
            // Released in order: an earlier rank may be taken again afterwards.
            #expect(state.withLock { $0 } == 0)
        }
    }

    /// How the trap message names `lock`'s rank.
    private static func rankName(_ lock: CoreLockForTesting) -> String {
        switch lock {
        case .backend: "backend"
        case .timer, .observer, .source: "item (timer, source or observer)"
        case .loopState: "loop state"
        case .blockQueue: "block queue"
        }
    }

    @Test("the loop-thread state touched from another thread traps", arguments: backends)
    func confinementTraps(_ backend: BackendKind) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let loop = try Loop.current(backend: backend)
            loop.run(timeout: .zero) // Binds the state to this thread.
            let done = DispatchSemaphore(value: 0)
            _ = try TestThread {
                loop.touchLoopThreadState()
                done.signal()
            }
            done.wait()
        }
        #expect(text(of: result).contains("loop-thread state was touched from a thread that is not the loop's own"))
    }
    #else
    /// The suite's stand-in in a release build, where none of its checks exist: skipped with
    /// the suite, it fails if it ever runs.
    @Test("release builds compile none of these checks")
    func compiledOut() {
        Issue.record("a debug-only suite ran in a build without DEBUG")
    }
    #endif
}

#if DEBUG
private func text(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}
#endif
