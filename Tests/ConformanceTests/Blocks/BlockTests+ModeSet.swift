import RunLoopKit
import TestSupport
import Testing

/// Objects › Blocks: the modes of `perform(in:)`, whatever their number — a bit each for the
/// process's first 64 modes, a set beyond — and given as a literal, a `ModeSet` or a `Set`.
extension BlockTests {
    @Test("blocks for modes numbered past 64 run only in those modes, in queue order", arguments: backends)
    func modesPastTheMask(_ backend: BackendKind) async throws {
        // 70 names no other test uses: the last of them are numbered 64 or more, whatever
        // other tests named before.
        let modes = (0..<70).map { Loop.Mode("ModeSet test mode \($0)") }
        let (low, high, higher) = (modes[0], modes[68], modes[69])
        let (_, trace) = try await traced(backend) { loop, trace in
            loop.perform(in: [high]) { trace("high") }
            loop.perform(in: [low, higher]) { trace("low or higher") }
            loop.perform(in: Loop.ModeSet([high, .default])) { trace("high or default") }
            loop.perform(in: [higher]) { trace("higher") }
            trace("run higher: \(loop.run(higher, timeout: generousDeadline))")
            trace("run high: \(loop.run(high, timeout: generousDeadline))")
            trace("run default: \(loop.run(.default, timeout: .zero))")
        }
        #expect(
            trace.all == [
                "low or higher", "higher", "run higher: finished",
                "high", "high or default", "run high: finished",
                "run default: finished",
            ])
    }

    @Test("perform(in:) and perform(after:in:) take the modes of a Set as well", arguments: backends)
    func modesFromASet(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let modes: Set<Loop.Mode> = ["A", "B"]
            loop.perform(in: modes) { trace("block in \(loop.currentMode!)") }
            loop.perform(after: .zero, in: modes) { trace("delayed in \(loop.currentMode!)") }
            trace("run B: \(loop.run("B", timeout: generousDeadline))")
        }
        #expect(trace.all == ["block in B", "delayed in B", "run B: finished"])
    }

    @Test("a ModeSet holds exactly the modes it was made of")
    func modeSetMembership() async throws {
        try await offThePool {
            let past = (0..<70).map { Loop.Mode("ModeSet membership mode \($0)") }
            let set = Loop.ModeSet([.default, past[69]])
            #expect(set.contains(.default))
            #expect(set.contains(past[69]))
            #expect(!set.contains(.common))
            #expect(!set.contains(past[68]))
            #expect(!set.isEmpty)
            #expect(Loop.ModeSet([]).isEmpty)
            #expect(set == [past[69], .default])
            #expect("\(set)" == "[kRunLoopDefaultMode, ModeSet membership mode 69]")
        }
    }
}
