// A TCP echo server on descriptor sources, tested by a client on another thread.
//
// One thread serves every connection without blocking: the listening socket and each
// connection are descriptor (version-1) sources, and the loop sleeps in the kernel until one
// of them is readable. Readiness is level-triggered and RunLoopKit never reads a descriptor,
// so each handler reads what it wants, and whatever it leaves makes it called again next pass.
//
// By default a client on another thread (plain blocking sockets) opens two connections, sends
// a few lines, checks each echo, closes, and the server stops. `--serve` keeps serving instead
// (try `nc 127.0.0.1 <port>`; Ctrl-C ends it).
//
//   swift run --package-path Examples echo-server
import Dispatch
import Glibc
import RunLoopKit
import Synchronization

func fail(_ operation: String) -> Never {
    print("echo-server: \(operation) failed: \(String(cString: strerror(errno)))")
    exit(1)
}

/// Calls `body` with 127.0.0.1:`port` as a `sockaddr`.
func withLoopbackAddress<R>(port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian // 127.0.0.1
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

// MARK: - The server, on the main thread's loop

let loop = Loop.current
let serveForever = CommandLine.arguments.contains("--serve")

// Non-blocking: once the pending connections are accepted, accept() says EAGAIN instead of
// blocking the one thread that serves everything.
let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
guard listener >= 0 else { fail("socket") }
// Port 0: the kernel picks a free port, so the example never collides with anything.
guard withLoopbackAddress(port: 0, { bind(listener, $0, $1) }) == 0 else { fail("bind") }
guard listen(listener, 16) == 0 else { fail("listen") }
var bound = sockaddr_in()
var boundLength = socklen_t(MemoryLayout<sockaddr_in>.size)
_ = withUnsafeMutablePointer(to: &bound) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &boundLength) }
}
let port = UInt16(bigEndian: bound.sin_port)
print("server: listening on 127.0.0.1:\(port)")

// The loop's thread is the only one that touches the connections: `LoopBoundBox` lets the
// `@Sendable` handlers share them without a lock, and traps if another thread ever reaches in.
let connections = LoopBoundBox([Int32: Loop.Source](), loop: loop)

/// Takes a connection out of the loop and closes it.
@Sendable func closeConnection(_ descriptor: Int32) {
    // Invalidate first: it takes the descriptor out of the kernel's interest set, so that the
    // number cannot be watched by mistake once close() frees it for reuse.
    connections.withValue { $0.removeValue(forKey: descriptor) }?.invalidate()
    close(descriptor)
}

/// Echoes what one connection sent, or closes it when the peer has closed its end.
@Sendable func echo(_ descriptor: Int32) {
    var buffer = [UInt8](repeating: 0, count: 4096)
    // One read per call is enough: if more is waiting, the source is ready again next pass.
    let count = read(descriptor, &buffer, buffer.count)
    if count < 0, errno == EAGAIN || errno == EINTR { return }
    guard count > 0 else {
        print("server: connection \(descriptor) closed by the peer; source invalidated, socket closed")
        closeConnection(descriptor)
        return
    }
    let text = String(decoding: buffer.prefix(count), as: UTF8.self)
    print("server: connection \(descriptor) echoes \(text.debugDescription)")
    // A few bytes always fit the socket's send buffer. A server streaming more would keep what
    // write() did not take and add a `.writable` source for the rest.
    guard write(descriptor, buffer, count) == count else { fail("write") }
}

let acceptor = try Loop.Source(fileDescriptor: listener, interest: .readable) { _ in
    while true {
        let descriptor = accept(listener, nil, nil)
        if descriptor < 0 {
            if errno == EAGAIN || errno == EINTR || errno == ECONNABORTED { return }
            fail("accept")
        }
        // Non-blocking like the listener (an accepted socket does not inherit that): a read
        // after a readiness report that went stale says EAGAIN instead of blocking the loop.
        guard fcntl(descriptor, F_SETFL, O_NONBLOCK) == 0 else { fail("fcntl") }
        print("server: accepted connection \(descriptor)")
        do {
            let source = try Loop.Source(fileDescriptor: descriptor, interest: .readable) { _ in echo(descriptor) }
            connections.withValue { $0[descriptor] = source }
            loop.add(source, to: .default)
        } catch {
            print("server: cannot watch connection \(descriptor): \(error)")
            close(descriptor)
        }
    }
}
loop.add(acceptor, to: .default)

// MARK: - The client, on another thread

/// Sends `line` and a newline on `descriptor` and reads until the echoed newline.
@Sendable func exchange(_ line: String, on descriptor: Int32) -> Bool {
    let message = Array((line + "\n").utf8)
    guard write(descriptor, message, message.count) == message.count else { return false }
    var received: [UInt8] = []
    var byte: UInt8 = 0
    while received.last != UInt8(ascii: "\n") {
        guard read(descriptor, &byte, 1) == 1 else { return false }
        received.append(byte)
    }
    print("client: sent \(line.debugDescription), got it back: \(received == message)")
    return received == message
}

/// Connects two clients, talks on both, closes both; true when every echo came back.
@Sendable func runClient() -> Bool {
    var sockets: [Int32] = []
    for _ in 0..<2 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        sockets.append(descriptor)
        // A read that waits 10 s for an echo means the server is broken: fail, do not hang.
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard withLoopbackAddress(port: port, { connect(descriptor, $0, $1) }) == 0 else { return false }
    }
    defer { for descriptor in sockets { close(descriptor) } }
    let (first, second) = (sockets[0], sockets[1])
    guard exchange("hello", on: first), exchange("run loop", on: second), exchange("bye", on: first) else {
        return false
    }
    // Closing our sending side: the server reads end of file and closes its end, which we
    // see as end of file in turn.
    for descriptor in sockets {
        shutdown(descriptor, Int32(SHUT_WR))
        var byte: UInt8 = 0
        guard read(descriptor, &byte, 1) == 0 else { return false }
    }
    print("client: the server closed both connections")
    return true
}

let clientSucceeded = Atomic<Bool>(false)
if serveForever {
    print("server: serving until interrupted; try: nc 127.0.0.1 \(port)")
} else {
    // Dispatch's pool keeps the example short; a thread of any kind does the same.
    DispatchQueue.global().async {
        clientSucceeded.store(runClient(), ordering: .relaxed)
        // Handed to the server's thread as a block: `perform` is safe from any thread and
        // wakes the loop, which then stops itself.
        loop.perform { loop.stop() }
    }
}

// A generous timeout only so that a broken build cannot hang the self-test.
let result = loop.run(.default, timeout: serveForever ? nil : .seconds(60))

// Shut down: every source out of the loop before its descriptor is closed.
acceptor.invalidate()
close(listener)
for descriptor in Array(connections.value.keys) { closeConnection(descriptor) }
print("server: stopped (.\(result))")
guard clientSucceeded.load(ordering: .relaxed) else {
    print("echo-server: the client's exchange failed")
    exit(1)
}
