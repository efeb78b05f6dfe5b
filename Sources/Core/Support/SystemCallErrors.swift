internal import CRunLoopSupport
import Glibc

/// The `errno` of the last failed call, read in a function ARC cannot reorder around.
@inline(never)
package func currentErrno() -> Int32 { errno }

/// `strerror` text for an errno value.
func describeErrno(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "unknown error" }
    return String(cString: text)
}

/// The symbolic name of an errno value (`EBADF`), or `nil` when the C library cannot tell.
func errnoName(_ code: Int32) -> String? {
    rlk_errno_name(code).map { String(cString: $0) }
}

/// Retries `body` while it fails with `EINTR`; returns its result or throws ``SystemError``.
///
/// - Parameters:
///   - operation: the C function's name, for the error.
///   - body: the call; a negative result means failure with `errno` set.
@inline(__always)
package func retryingOnInterrupt<T: BinaryInteger>(_ operation: String, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = currentErrno()
        if code != EINTR { throw SystemError(operation, errno: code) }
    }
}
