import Glibc
import RunLoopKit
import Synchronization
import TestSupport
import Testing

/// Objects › Mode: a mode made common later receives every common item as it is at that moment.
extension ModeTests {
    @Test(
        "a signalled version-0 source joining a mode made common is performed when that mode runs", arguments: backends)
    func signalledSourceJoinsNewCommonMode(_ backend: BackendKind) async throws {
        let (_, trace) = try await traced(backend) { loop, trace in
            let source = recordingSource("s", into: trace)
            loop.add(source, to: .common)
            loop.remove(source, from: .default)
            source.signal()
            loop.addCommonMode("X")
            #expect(loop.run("X", timeout: .zero) == .timedOut)
            source.signal()
            #expect(loop.run("X", timeout: .zero) == .timedOut)
            source.invalidate()
        }
        #expect(trace.all == ["s", "s"])
    }

    @Test(
        "addCommonMode racing invalidate or remove(from: .common): cancel never precedes schedule, nothing left behind",
        arguments: backends)
    func addCommonModeRacingRemoval(_ backend: BackendKind) async throws {
        let problems = try await onLoopThread(backend) { loop -> [String] in
            var problems: [String] = []
            for round in 0..<150 {
                let log = Lock<[String]>([])
                let source = Loop.Source(
                    schedule: { _, mode in log.withLock { $0.append("+\(mode)") } },
                    cancel: { _, mode in log.withLock { $0.append("-\(mode)") } }
                ) {}
                loop.add(source, to: .common)
                let mode = Loop.Mode("race \(round)")
                let go = Atomic<Int>(0)
                let finished = (Latch(), Latch())
                _ = try TestThread {
                    _ = go.add(1, ordering: .acquiringAndReleasing)
                    spin(until: { go.load(ordering: .acquiring) >= 2 }, "the other thread of the race never started")
                    loop.addCommonMode(mode)
                    finished.0.open()
                }
                _ = try TestThread {
                    _ = go.add(1, ordering: .acquiringAndReleasing)
                    spin(until: { go.load(ordering: .acquiring) >= 2 }, "the other thread of the race never started")
                    if round.isMultiple(of: 2) { source.invalidate() } else { loop.remove(source, from: .common) }
                    finished.1.open()
                }
                finished.0.wait()
                finished.1.wait()
                let events = log.withLock { $0 }
                // The default mode was joined and left; the new mode joined and left, or (when the
                // removal came first) was never joined.
                for (name, allowed) in [(Loop.Mode.default.name, [["+", "-"]]), (mode.name, [["+", "-"], []])] {
                    let forMode = events.filter { $0.dropFirst() == name[...] }.map { String($0.prefix(1)) }
                    if !allowed.contains(forMode) { problems.append("round \(round), \(name): \(forMode)") }
                }
                if loop.contains(source, in: mode) || loop.contains(source, in: .default) {
                    problems.append("round \(round): still in a mode")
                }
                if source.loopCount != 0 { problems.append("round \(round): the source still records the loop") }
                source.invalidate()
            }
            return problems
        }
        #expect(problems == [])
    }
    @Test(
        "a block queued for the common modes wakes a loop asleep in a mode made common meanwhile",
        .realTimeOnly(.otherThreadWhileAsleep), arguments: backends)
    func commonBlockWakesLoopInNewCommonMode(_ backend: BackendKind) async throws {
        let (result, trace) = try await traced(backend) { (loop, trace) -> Loop.RunResult in
            loop.perform(in: [.common]) {
                trace("block in \(loop.currentMode?.name ?? "no mode")")
                loop.stop()
            }
            let keepsXAlive = Loop.Source {}
            loop.add(keepsXAlive, to: "X")
            defer { keepsXAlive.invalidate() }
            // Once the loop sleeps in X (where the block does not run yet), X becomes common.
            _ = try TestThread {
                let deadline = ContinuousClock.now + generousDeadline
                while !(loop.isWaiting && loop.currentMode == "X"), ContinuousClock.now < deadline { sched_yield() }
                loop.addCommonMode("X")
            }
            return loop.run("X", timeout: .seconds(10))
        }
        #expect(result == .stopped)
        #expect(trace.all == ["block in X"])
    }
}
