import Glibc
import RunLoopCore
import Synchronization

/// A real, pollable descriptor whose readiness the test sets: readable, writable, hung up.
///
/// Give ``fileDescriptor`` to the code under test as it would get a socket or a pipe, watch it
/// with a descriptor source (`Loop.Source(fileDescriptor:interest:handler:)`) or
/// `Loop.readiness(of:for:in:)`, and script it from the test:
///
/// ```swift
/// let peer = try ScriptedDescriptor()
/// let source = try Loop.Source(fileDescriptor: peer.fileDescriptor) { readiness in … }
/// virtual.loop.add(source, to: .default)
/// peer.send([1, 2, 3])            // readable: the source's handler reads the bytes
/// try virtual.runUntilIdle()
/// ```
///
/// It is one end of a Unix stream socket pair; the test holds the other. So it is a descriptor
/// like any other to the loop and to the kernel: its file identity, a close behind a source's
/// back and level-triggered readiness behave as they do for a socket. Readiness follows the
/// data, as on a socket: bytes sent stay readable until the code reads them (or ``drain()``
/// drops them), ``setWritable(_:)`` fills or empties the socket's buffer, and ``hangUp()``
/// closes the test's end for good.
///
/// ``fileDescriptor`` is blocking, as a socket is when made: code that reads until `EAGAIN`
/// sets `O_NONBLOCK` itself, or it blocks its loop. After ``hangUp()``, a `write(2)` to it raises
/// `SIGPIPE`, which ends the process unless the code writes with `send(_:_:_:_:)` and
/// `MSG_NOSIGNAL` or the process ignores the signal, as for any socket whose peer is gone.
///
/// The scripting methods are safe from any thread; a loop watching the descriptor wakes when
/// its readiness changes, as for any descriptor. ``setWritable(_:)``, ``written()`` and
/// ``hangUp()`` read or fill the stream the code writes to: call them while the code does not
/// write (between advances, with the loop settled), or its bytes and the filler may interleave.
///
/// The test owns both ends: ``close()`` (or the last reference going) closes them; invalidate
/// the sources watching ``fileDescriptor`` first. Code under test that closes ``fileDescriptor``
/// itself (as code that owns a connection does) must be followed by
/// ``fileDescriptorWasClosed()``, so that the number, perhaps another test's by then, is not
/// closed twice.
public final class ScriptedDescriptor: Sendable {
    /// The descriptor to watch: the code under test reads from it and writes to it.
    public let fileDescriptor: Int32

    /// The test's end of the pair, and what it knows of the stream.
    private struct Peer {
        /// The test's end; `-1` once hung up or closed.
        var descriptor: Int32
        /// Bytes the test wrote into ``fileDescriptor``'s outgoing buffer to make it not
        /// writable, still ahead of the code's own bytes in the stream.
        var filler = 0
        /// Bytes the code under test wrote, read off the stream (``written()`` hands them out).
        var written: [UInt8] = []
        /// ``close()`` was called.
        var isClosed = false
        /// ``fileDescriptor`` was closed by the code under test: never closed here.
        var codeClosedIt = false
    }

    private let peer: Mutex<Peer>

    /// Opens a descriptor, writable and not readable.
    ///
    /// - Throws: `SystemError` when the socket pair cannot be made (for example at the
    ///   process's descriptor limit).
    public init() throws(SystemError) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw SystemError("socketpair", errno: errno)
        }
        // The socket's own buffer sizes: a descriptor like any socket's to the code under test.
        fileDescriptor = ends[0]
        peer = Mutex(Peer(descriptor: ends[1]))
    }

    deinit {
        peer.withLock { peer in
            if peer.descriptor >= 0 { _ = Glibc.close(peer.descriptor) }
            if !peer.isClosed, !peer.codeClosedIt { _ = Glibc.close(fileDescriptor) }
        }
    }

    /// Sends `bytes` to ``fileDescriptor``: it is readable until the code has read them all (or
    /// ``drain()`` drops them).
    ///
    /// Traps with a message after ``hangUp()`` or ``close()``, when the code closed
    /// ``fileDescriptor`` (the write fails), or when the socket's buffer is full (about 200 KB
    /// unread).
    public func send(_ bytes: [UInt8] = [0]) {
        trap(unless: !bytes.isEmpty, "ScriptedDescriptor.send(_:) with no bytes: nothing would become readable")
        peer.withLock { peer in
            let descriptor = Self.open(peer, "send(_:)")
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
                }
                guard count > 0 else {
                    trap("ScriptedDescriptor.send(_:): \(Self.describe(errno)) after \(sent) of \(bytes.count) bytes")
                }
                sent += count
            }
        }
    }

    /// Drops what was sent and not yet read: ``fileDescriptor`` is no longer readable (until the
    /// next ``send(_:)``). Returns the bytes dropped.
    ///
    /// Traps with a message after ``close()`` or ``fileDescriptorWasClosed()``.
    @discardableResult
    public func drain() -> [UInt8] {
        peer.withLock { peer in
            trap(unless: !peer.isClosed, "ScriptedDescriptor.drain() after close()")
            trap(unless: !peer.codeClosedIt, "ScriptedDescriptor.drain() after the code closed fileDescriptor")
            return Self.readAll(fileDescriptor)
        }
    }

    /// Makes ``fileDescriptor`` writable (`true`: its outgoing buffer emptied) or not (`false`:
    /// filled to the brim, so that a write would fail with `EAGAIN` or block). It starts
    /// writable.
    ///
    /// What the code wrote before is kept for ``written()``. Traps with a message after
    /// ``hangUp()``, ``close()`` or ``fileDescriptorWasClosed()``.
    public func setWritable(_ writable: Bool) {
        peer.withLock { peer in
            let descriptor = Self.open(peer, "setWritable(_:)")
            trap(
                unless: !peer.codeClosedIt, "ScriptedDescriptor.setWritable(_:) after the code closed fileDescriptor")
            collect(&peer, from: descriptor)
            guard !writable else { return }
            let chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeBytes {
                    Glibc.send(fileDescriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
                }
                if count > 0 {
                    peer.filler += count
                    continue
                }
                let error = errno
                guard error == EAGAIN || error == EWOULDBLOCK else {
                    trap("ScriptedDescriptor.setWritable(false): \(Self.describe(error))")
                }
                return
            }
        }
    }

    /// What the code under test wrote to ``fileDescriptor`` since the last call, in order.
    ///
    /// Reading it makes room in the socket's buffer, as a peer reading would. While
    /// ``setWritable(_:)``'s `false` holds, it returns what was written before (nothing can be
    /// written then); after ``hangUp()``, what was written before the hang-up. Traps with a
    /// message after ``close()``.
    public func written() -> [UInt8] {
        peer.withLock { peer in
            trap(unless: !peer.isClosed, "ScriptedDescriptor.written() after close()")
            if peer.descriptor >= 0, peer.filler == 0 { collect(&peer, from: peer.descriptor) }
            defer { peer.written = [] }
            return peer.written
        }
    }

    /// The peer hangs up for good: ``fileDescriptor`` reports a hang-up (and is readable: reads
    /// return what is left, then end of file), and writes to it fail with `EPIPE`.
    ///
    /// Traps with a message when called twice or after ``close()``.
    public func hangUp() {
        peer.withLock { peer in
            let descriptor = Self.open(peer, "hangUp()")
            // Everything unread is read first (the filler dropped, the code's bytes kept): a
            // socket closed with unread data resets the connection instead of hanging up.
            collect(&peer, from: descriptor)
            _ = Glibc.close(descriptor)
            peer.descriptor = -1
        }
    }

    /// Closes ``fileDescriptor`` and the test's end. Invalidate the sources that watch it
    /// first; closing it while a source watches it is the mistake the contract's rules on a
    /// descriptor closed behind a source's back describe, and can be scripted so.
    ///
    /// Traps with a message when called twice.
    public func close() {
        peer.withLock { peer in
            trap(unless: !peer.isClosed, "ScriptedDescriptor.close() called twice")
            if peer.descriptor >= 0 { _ = Glibc.close(peer.descriptor) }
            if !peer.codeClosedIt { _ = Glibc.close(fileDescriptor) }
            peer.descriptor = -1
            peer.isClosed = true
        }
    }

    /// Says the code under test closed ``fileDescriptor``: it is not closed again here (by
    /// ``close()`` or when the last reference goes), only the test's end is.
    ///
    /// Traps with a message after ``close()``.
    public func fileDescriptorWasClosed() {
        peer.withLock { peer in
            trap(unless: !peer.isClosed, "ScriptedDescriptor.fileDescriptorWasClosed() after close()")
            peer.codeClosedIt = true
        }
    }

    // MARK: - Helpers

    /// Reads the test's end: the filler first, dropped, then the code's bytes, kept.
    private func collect(_ peer: inout Peer, from descriptor: Int32) {
        var bytes = Self.readAll(descriptor)
        let dropped = min(peer.filler, bytes.count)
        peer.filler -= dropped
        bytes.removeFirst(dropped)
        peer.written += bytes
    }

    /// The test's end, or a trap naming `operation` when it is gone.
    private static func open(_ peer: Peer, _ operation: String) -> Int32 {
        trap(unless: !peer.isClosed, "ScriptedDescriptor.\(operation) after close()")
        trap(unless: peer.descriptor >= 0, "ScriptedDescriptor.\(operation) after hangUp(): the peer is gone")
        return peer.descriptor
    }

    /// Everything `descriptor` has to read now, without waiting.
    private static func readAll(_ descriptor: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            guard count > 0 else { return bytes }
            bytes += buffer[..<count]
        }
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
