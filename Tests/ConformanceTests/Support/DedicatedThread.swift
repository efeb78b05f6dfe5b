import RunLoopKit
import TestSupport

/// Runs `body` on a new thread and awaits its result, leaving Swift's cooperative threads
/// free meanwhile.
///
/// For tests that block for seconds (a poster waiting on a loop, a child program to finish):
/// blocking one of the two cooperative threads of a 2-core machine that long would hold up
/// the tests that run in parallel.
func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        do {
            try spawnThread { continuation.resume(with: Result { try body() }) }
        } catch {
            continuation.resume(throwing: error)
        }
    }
}
