import RunLoopKit
import TestSupport
import Testing

@Suite("Smoke")
struct SmokeTests {
    @Test("a timer fires and the run ends finished", arguments: backends)
    func timerFires(_ backend: BackendKind) async throws {
        let trace = Trace()
        let result = try await onLoopThread(backend) { loop in
            let timer = try Loop.Timer(after: .milliseconds(1)) { _ in trace("fired") }
            loop.add(timer, to: .default)
            return loop.run(timeout: generousDeadline)
        }
        #expect(result == .finished)
        #expect(trace.all == ["fired"])
    }
}
