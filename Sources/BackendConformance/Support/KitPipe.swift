import Glibc
import RunLoopCore

/// A non-blocking pipe a check watches; closed with ``close()`` (at most once per end).
/// Package-wide: the test targets' `Pipe` is one.
package final class KitPipe: Sendable {
    package let readEnd: Int32
    package let writeEnd: Int32

    package init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemError("pipe", errno: currentErrno()) }
        (readEnd, writeEnd) = (ends[0], ends[1])
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
    }

    /// Writes `count` bytes (one by default).
    package func fill(_ count: Int = 1) {
        let bytes = [UInt8](repeating: 0x2A, count: count)
        _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, count) }
    }

    /// Reads whatever is there; returns how many bytes.
    @discardableResult
    package func drain() -> Int {
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(readEnd, &buffer, buffer.count)
            if count <= 0 { return total }
            total += count
        }
    }

    package func closeWriteEnd() { Glibc.close(writeEnd) }

    package func close() {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }
}

/// A descriptor number that is not open in this process: 1,000,000, or the first number above
/// it that is not open (descriptors are handed out lowest first, so none reaches it unless
/// nearly a million are open).
func descriptorNotOpen() -> Int32 {
    var candidate: Int32 = 1_000_000
    while fcntl(candidate, F_GETFD) != -1 { candidate += 1 }
    return candidate
}
