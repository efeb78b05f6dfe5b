import Glibc
import InMemoryLogging
import Logging
import RunLoopKit
import TestSupport
import Testing

/// RunLoopKit's reports go through `Loop.logger` (swift-log): each has its level, its message
/// and its metadata (contract rules M6 and D8, and the registration failures); the default
/// logger writes the same line to standard error as RunLoopKit always did.
///
/// In-process tests read the records from ``LogCapture``; the ones that need a fresh process
/// (a report made once per process, the default logger, replacing the logger) are exit tests.
@Suite("Logging: reports through Loop.logger")
struct LoggingTests {
    // Serialized: every case duplicates to the same high number, so two cases in parallel would
    // hand each other the number between one's close and its loop's check.
    @Test(
        "a descriptor closed behind its source: an error record naming loop, descriptor and source", .serialized,
        arguments: backends
    )
    func closedDescriptorRecord(_ backend: BackendKind) async throws {
        LogCapture.install()
        let (loopName, fd, sourceName, valid) = try await onLoopThread(backend) { loop in
            let pipe = try Pipe()
            defer { pipe.close() }
            // A number near the top of the descriptor limit: the kernel hands out the lowest free
            // number, so no other test's open can take this one between its close and the loop's
            // check (with the pipe's own number, one did: the record then said "reused").
            let fd = try highDescriptor(duplicating: pipe.readEnd)
            let source = try Loop.Source(fileDescriptor: fd, order: uniqueOrder()) { _ in }
            close(fd)
            loop.add(source, to: .default)
            loop.run(timeout: .zero)
            return (loop.description, fd, source.description, source.isValid)
        }
        #expect(!valid, "the source was not invalidated")
        let records = LogCapture.records(where: Loop.ReportKey.source, is: sourceName)
        try #require(records.count == 1, "\(records)")
        let record = records[0]
        #expect(record.level == .error)
        #expect(
            record.message.description
                == "descriptor \(fd) was closed while its source was in a loop; invalidate a source before closing its descriptor; \(sourceName) is invalidated"
        )
        #expect(
            record.metadata == [
                "report": "descriptor-closed", "loop": .string(loopName), "descriptor": "\(fd)",
                "source": .string(sourceName),
            ])
        #expect(record.error == nil)
    }

    @Test("a descriptor closed and reused behind its source: the record says it was reused", arguments: backends)
    func reusedDescriptorRecord(_ backend: BackendKind) async throws {
        LogCapture.install()
        let (loopName, fd, sourceName, valid) = try await onLoopThread(backend) { loop in
            let (old, new) = (try Pipe(), try Pipe())
            let source = try Loop.Source(fileDescriptor: old.readEnd, order: uniqueOrder()) { _ in }
            // The old number now names the new pipe's read end.
            #expect(dup2(new.readEnd, old.readEnd) == old.readEnd)
            loop.add(source, to: .default)
            loop.run(timeout: .zero)
            old.close()
            new.close()
            return (loop.description, old.readEnd, source.description, source.isValid)
        }
        #expect(!valid, "the source was not invalidated")
        let records = LogCapture.records(where: Loop.ReportKey.source, is: sourceName)
        try #require(records.count == 1, "\(records)")
        #expect(records[0].level == .error)
        #expect(
            records[0].message.description
                == "descriptor \(fd) was closed and reused for another file while its source was in a loop; invalidate a source before closing its descriptor; \(sourceName) is invalidated"
        )
        #expect(
            records[0].metadata == [
                "report": "descriptor-closed", "loop": .string(loopName), "descriptor": "\(fd)",
                "source": .string(sourceName),
            ])
    }

    @Test(
        "the default logger writes exactly the lines RunLoopKit wrote before, one per report, to standard error",
        arguments: backends)
    func defaultOutputUnchanged(_ backend: BackendKind) async throws {
        let result = await #expect(
            processExitsWith: .success, observing: [\.standardOutputContent, \.standardErrorContent]
        ) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let loop = try Loop.current(backend: backend)
            loop.run(.common)
            loop.run(.common)
            let (closed, old, new) = (try Pipe(), try Pipe(), try Pipe())
            // A high number for the closed descriptor: a backend that opens a descriptor of its
            // own meanwhile (GLib's wakeup) takes the lowest free one, and would reuse a low one.
            let closedNumber = fcntl(closed.readEnd, F_DUPFD_CLOEXEC, 900)
            let closedSource = try Loop.Source(fileDescriptor: closedNumber) { _ in }
            _ = Glibc.close(closedNumber)
            closed.close()
            loop.add(closedSource, to: .default)
            loop.run(timeout: .zero)
            let reusedSource = try Loop.Source(fileDescriptor: old.readEnd, order: 7) { _ in }
            _ = dup2(new.readEnd, old.readEnd)
            loop.add(reusedSource, to: .default)
            loop.run(timeout: .zero)
            // What the parent needs to know to build the lines: the numbers and the sources.
            let facts = "\(closedNumber)\n\(closedSource)\n\(old.readEnd)\n\(reusedSource)\n"
            _ = facts.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
        }
        let facts = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
            .split(separator: "\n").map(String.init)
        try #require(facts.count == 4, "the child printed \(facts)")
        let expected = [
            "RunLoopKit: Loop.run(.common) is a usage error: .common is a set of modes, not a mode; run one of them",
            "RunLoopKit: descriptor \(facts[0]) was closed while its source was in a loop; invalidate a source before closing its descriptor; \(facts[1]) is invalidated",
            "RunLoopKit: descriptor \(facts[2]) was closed and reused for another file while its source was in a loop; invalidate a source before closing its descriptor; \(facts[3]) is invalidated",
        ]
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let reported = errors.split(separator: "\n").filter { $0.contains("RunLoopKit") }.map(String.init)
        #expect(reported == expected, "standard error: \(errors)")
    }
}

/// A source order no other test uses: the source's description (which shows it) then picks
/// this test's records out of the shared capture.
private func uniqueOrder() -> Int { Int.random(in: 1_000_000_000...Int(Int32.max)) }
