import Glibc
import RunLoopKit

/// A pipe whose ends the test closes when done.
public final class Pipe: Sendable {
    public let readEnd: Int32
    public let writeEnd: Int32

    public init() throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw SystemError("pipe", errno: currentErrno()) }
        (readEnd, writeEnd) = (ends[0], ends[1])
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
    }

    /// Writes `count` bytes.
    public func fill(_ count: Int = 1) {
        let bytes = [UInt8](repeating: 0x2A, count: count)
        _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, count) }
    }

    /// Reads whatever is there; returns how many bytes.
    @discardableResult
    public func drain() -> Int {
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(readEnd, &buffer, buffer.count)
            if count <= 0 { return total }
            total += count
        }
    }

    public func close() {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }
}
