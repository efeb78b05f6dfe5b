import RunLoopKit
import TestSupport
import Testing

@Suite("Smoke")
struct SmokeTests {
    @Test("a timer fires and the run ends finished", arguments: backends)
    func timerFires(_ backend: BackendKind) async throws {
        let (result, trace) = try await tracedRun(backend) { loop, trace in
            let timer = try Loop.Timer(after: .milliseconds(1)) { _ in trace("fired") }
            loop.add(timer, to: .default)
        }
        #expect(result == .finished)
        #expect(trace.all == ["fired"])
    }
}
