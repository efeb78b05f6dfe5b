import RunLoopKit

/// A backend wait as Core makes it: a wait that returns early with nothing to report (a signal
/// interrupted it — the test runner's child processes send SIGCHLD) waits again for the rest.
///
/// - Returns: whether the backend's waker ended the wait.
@discardableResult
func waitOut(_ backend: any Backend, timeout: Duration?, into events: inout [ReadyEvent]) throws -> Bool {
    let start = ContinuousClock.now
    while true {
        let remaining = timeout.map { max(.zero, $0 - (ContinuousClock.now - start)) }
        let woken = try backend.wait(timeout: remaining, into: &events)
        if woken || !events.isEmpty || remaining == .zero { return woken }
        if let timeout, ContinuousClock.now - start >= timeout { return false }
    }
}
