import RunLoopKit
import TestSupport
import Testing

/// Objects › Items: an invalidated item is never called again — not even for the rest of a
/// batch of port messages.
extension Version1SourceTests {
    @Test(
        "a port source that invalidates itself receives no further message; the rest stay in the port",
        arguments: backends)
    func portSourceInvalidatedMidBatch(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let port = try Loop.Port<Int>()
            for message in 1...3 { port.send(message) }
            let ref = WeakRef<Loop.Source>()
            let first = Loop.Source(port: port) { message in
                trace("first \(message)")
                ref.value?.invalidate()
            }
            ref.value = first
            loop.add(first, to: .default)
            #expect(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource)
            let second = Loop.Source(port: port) { message in trace("second \(message)") }
            loop.add(second, to: .default)
            #expect(loop.run(timeout: generousDeadline, returnAfterSourceHandled: true) == .handledSource)
            second.invalidate()
        }
        #expect(trace.all == ["first 1", "second 2", "second 3"])
    }
}
