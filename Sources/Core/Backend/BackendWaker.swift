/// Wakes a backend's wait from any thread.
///
/// A wake that happens before a wait begins makes that wait return at once; several wakes
/// before one wait are consumed by that wait together (the wait after it sleeps as usual);
/// wakes posted while one is already pending should cost no system call.
///
/// The loop keeps its backend's waker after the backend itself is released (when the loop's
/// thread exits): a `wake()` then must stay harmless — a waker owns what it writes to, or
/// checks that its target still exists.
public protocol BackendWaker: Sendable {
    /// Makes the current or next ``Backend/wait(timeout:into:)`` return. Safe from any thread,
    /// concurrently with everything, including the backend's release.
    func wake()
}
