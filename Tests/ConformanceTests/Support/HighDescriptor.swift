import Glibc
import RunLoopKit
import TestSupport

/// A duplicate of `descriptor` at a free number near the top of the process's descriptor limit,
/// far above the numbers other tests are handed.
func highDescriptor(duplicating descriptor: Int32) throws -> Int32 {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
        throw SystemError("getrlimit", errno: errno)
    }
    // Below the limit by a margin of numbers to try (some may be taken); F_DUPFD takes the
    // lowest free number at or above the one asked for.
    let floor = Int32(clamping: min(limit.rlim_cur, 1 << 20)) - 256
    let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, max(floor, 3))
    guard duplicate >= 0 else { throw SystemError("fcntl(F_DUPFD_CLOEXEC)", errno: errno) }
    return duplicate
}
