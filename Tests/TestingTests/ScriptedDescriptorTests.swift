import Glibc
import RunLoopKit
import RunLoopKitTesting
import TestSupport
import Testing

/// A scripted descriptor on a virtual loop: its readiness is what the test sets, and the loop's
/// descriptor rules (level-triggered, hang-ups reported to every interest) hold as for a socket.
@Suite("ScriptedDescriptor", .timeLimit(.minutes(1)))
struct ScriptedDescriptorTests {
    /// Reads what `descriptor` has now (it is readable), as the code under test would.
    static func readSome(_ descriptor: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return count > 0 ? Array(buffer[..<count]) : []
    }

    @Test("bytes sent make it readable; the handler reads them and the loop settles")
    func readable() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let peer = try ScriptedDescriptor()
        let record = EventRecord()
        let source = try Loop.Source(fileDescriptor: peer.fileDescriptor) { readiness in
            record.append("\(readiness) \(Self.readSome(peer.fileDescriptor))")
        }
        virtual.loop.add(source, to: .default)
        try virtual.runUntilIdle()
        #expect(record.all.isEmpty, "not readable before anything is sent")
        peer.send([1, 2, 3])
        try virtual.runUntilIdle()
        #expect(record.all == ["[readable] [1, 2, 3]"])
        peer.send([4])
        try virtual.advance(by: .seconds(10))
        #expect(record.all == ["[readable] [1, 2, 3]", "[readable] [4]"])
        source.invalidate()
    }

    @Test("drain() ends readability before the loop sees it")
    func drainEndsReadability() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let peer = try ScriptedDescriptor()
        let record = EventRecord()
        let source = try Loop.Source(fileDescriptor: peer.fileDescriptor) { readiness in
            record.append("\(readiness)")
        }
        peer.send([7, 8])
        #expect(peer.drain() == [7, 8])
        virtual.loop.add(source, to: .default)
        try virtual.runUntilIdle()
        #expect(record.all.isEmpty)
        source.invalidate()
    }

    @Test("setWritable(false) holds a writer back until setWritable(true); written() returns its bytes")
    func writable() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let peer = try ScriptedDescriptor()
        let record = EventRecord()
        peer.setWritable(false)
        // A writer with one message: it writes when writable, then stops watching.
        let writer = WeakRef<Loop.Source>()
        let source = try Loop.Source(fileDescriptor: peer.fileDescriptor, interest: .writable) { readiness in
            let message: [UInt8] = Array("hello".utf8)
            let count = message.withUnsafeBytes { write(peer.fileDescriptor, $0.baseAddress, $0.count) }
            record.append("\(readiness) wrote \(count)")
            writer.value?.invalidate()
        }
        writer.value = source
        virtual.loop.add(source, to: .default)
        try virtual.advance(by: .seconds(5))
        #expect(record.all.isEmpty, "not writable")
        #expect(peer.written().isEmpty)
        peer.setWritable(true)
        try virtual.runUntilIdle()
        #expect(record.all == ["[writable] wrote 5"])
        #expect(peer.written() == Array("hello".utf8))
        #expect(peer.written().isEmpty, "handed out once")
    }

    /// A reader that reads all there is at each call and stops watching at a hang-up, recording
    /// what it saw: "[readable, hangup] [[9], []]" for a byte then end of file.
    static func hangUpReader(_ peer: ScriptedDescriptor, into record: EventRecord) throws -> Loop.Source {
        let reader = WeakRef<Loop.Source>()
        let source = try Loop.Source(fileDescriptor: peer.fileDescriptor) { readiness in
            var reads: [[UInt8]] = []
            while true {
                let bytes = Self.readSome(peer.fileDescriptor)
                reads.append(bytes)
                if bytes.isEmpty { break }
            }
            record.append("\(readiness) \(reads)")
            if readiness.contains(.hangup) { reader.value?.invalidate() }
        }
        reader.value = source
        return source
    }

    @Test("hangUp() reports a hang-up to a reader; reads then see the rest, then end of file")
    func hangUp() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let peer = try ScriptedDescriptor()
        let record = EventRecord()
        let source = try Self.hangUpReader(peer, into: record)
        // Both before the loop watches: a loop asleep could see the byte alone first.
        peer.send([9])
        peer.hangUp()
        virtual.loop.add(source, to: .default)
        try virtual.runUntilIdle()
        #expect(record.all == ["[readable, hangup] [[9], []]"])
        #expect(!source.isValid)
    }

    @Test("hangUp() while not writable is still a clean hang-up, and written() keeps what was written before")
    func hangUpWhileNotWritable() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let peer = try ScriptedDescriptor()
        let message: [UInt8] = [1, 2]
        #expect(message.withUnsafeBytes { write(peer.fileDescriptor, $0.baseAddress, $0.count) } == 2)
        peer.setWritable(false)
        let record = EventRecord()
        let source = try Self.hangUpReader(peer, into: record)
        // Both before the loop watches: a loop asleep could see the byte alone first.
        peer.send([9])
        peer.hangUp()
        virtual.loop.add(source, to: .default)
        try virtual.runUntilIdle()
        // A reset (unread data on the closed end) would report an error and end reads with ECONNRESET.
        #expect(record.all == ["[readable, hangup] [[9], []]"])
        #expect(peer.written() == message)
    }

    @Test("code that closes the descriptor itself: fileDescriptorWasClosed() leaves the number alone")
    func codeClosesTheDescriptor() throws {
        let virtual = try VirtualLoop()
        defer { virtual.stop() }
        let peer = try ScriptedDescriptor()
        let record = EventRecord()
        // The code under test: it closes its connection once the peer hung up.
        let reader = WeakRef<Loop.Source>()
        let source = try Loop.Source(fileDescriptor: peer.fileDescriptor) { readiness in
            record.append("\(readiness) \(Self.readSome(peer.fileDescriptor))")
            if readiness.contains(.hangup) {
                reader.value?.invalidate()
                close(peer.fileDescriptor)
                peer.fileDescriptorWasClosed()
            }
        }
        reader.value = source
        virtual.loop.add(source, to: .default)
        peer.hangUp()
        try virtual.runUntilIdle()
        #expect(record.all == ["[readable, hangup] []"])
        // Closes the test's end only: the number the code closed may be another test's by now.
        peer.close()
    }

    @Test("a descriptor left ready fails the advance within the settle limit instead of hanging")
    func neverSettles() throws {
        let virtual = try VirtualLoop(settleLimit: .seconds(2))
        defer { virtual.stop() }
        let peer = try ScriptedDescriptor()
        let calls = AtomicInt()
        // Level-triggered: a handler that never reads is called again at every pass.
        let source = try Loop.Source(fileDescriptor: peer.fileDescriptor) { _ in _ = calls.increment() }
        virtual.loop.add(source, to: .default)
        peer.send()
        #expect(throws: VirtualLoopError.notSettled(within: .seconds(2))) {
            try virtual.runUntilIdle()
        }
        #expect(calls.value > 1)
        peer.drain()
        try virtual.runUntilIdle()
        let settledCalls = calls.value
        try virtual.advance(by: .seconds(1))
        #expect(calls.value == settledCalls, "drained: not called again")
        source.invalidate()
    }
}
