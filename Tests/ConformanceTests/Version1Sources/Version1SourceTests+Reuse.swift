import Glibc
import RunLoopKit
import TestSupport
import Testing

/// A descriptor closed and its number reused behind its source's back: the stranger's events
/// never reach the old handler, and the misuse is reported, on every backend.
extension Version1SourceTests {
    @Test("a descriptor closed and reused behind its source's back never feeds the old handler", arguments: backends)
    func reusedDescriptorNeverReachesOldHandler(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            try await onLoopThread(backend) { loop in
                let old = try Pipe()
                let stranger = try Pipe()
                let calls = Trace()
                let number = old.readEnd
                let source = try Loop.Source(fileDescriptor: number) { readiness in calls("old handler \(readiness)") }
                loop.add(source, to: .default)
                let (keepAlive, port) = try keepAliveSource()
                loop.add(keepAlive, to: .default)
                loop.run(timeout: .zero)
                // The misuse: the number now names the stranger's read end. The old pipe's
                // writer then closes (an event on the old file, if anything still watches it).
                dup2(stranger.readEnd, number)
                close(old.writeEnd)
                stranger.fill()
                // Passes until the stranger's data would have been seen several times over.
                port.send(1)
                for _ in 0..<5 { loop.run(timeout: .milliseconds(20)) }
                // A mode switch makes every backend register afresh.
                loop.add(try Loop.Source(fileDescriptor: stranger.writeEnd, interest: .writable) { _ in }, to: "other")
                loop.run("other", timeout: .zero)
                loop.run(timeout: .zero)
                let line = "\ncalls \(calls.all.filter { $0.contains("readable") }) valid \(source.isValid)\n"
                _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
                source.invalidate()
                keepAlive.invalidate()
            }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("calls [] valid false"), "\(text)")
        #expect(text.contains("was closed"), "\(text)")
    }
}
