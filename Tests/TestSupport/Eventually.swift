import Glibc

/// Waits (blocking the calling thread) until `condition` holds; false if it did not within
/// `timeout`. For a state the test cannot be told about, such as a timer that another thread's
/// task adds to a loop: it looks every 100 µs.
public func waitUntil(within timeout: Duration = generousDeadline, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        usleep(100)
    }
    return true
}

/// Waits, without holding a thread, until `condition` holds; false if it did not within
/// `timeout`. For a state the test cannot be told about: it looks every millisecond.
public func eventually(within timeout: Duration = generousDeadline, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}
