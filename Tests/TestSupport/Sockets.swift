import Glibc
import RunLoopKit

/// A connected pair of stream sockets, close-on-exec.
public func socketPair() throws -> (Int32, Int32) {
    var ends: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
        throw SystemError("socketpair", errno: currentErrno())
    }
    return (ends[0], ends[1])
}

/// Waits (up to the generous deadline) until `descriptor` reads end of file.
public func waitForEndOfFile(_ descriptor: Int32) -> String {
    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    let millis = Int32(generousDeadline.components.seconds * 1000)
    guard poll(&entry, 1, millis) == 1 else { return "still open" }
    var byte: UInt8 = 0
    return read(descriptor, &byte, 1) == 0 ? "end of file" : "data"
}
