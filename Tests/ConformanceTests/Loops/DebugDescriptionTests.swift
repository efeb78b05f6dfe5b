import Glibc
import RunLoopKit
import TestSupport
import Testing

/// A loop's `debugDescription`: a stable rendering of its modes, items, blocks and state.
@Suite("Debug description")
struct DebugDescriptionTests {
    @Test("a scripted loop is described exactly, idle, running and nested", arguments: backends)
    func scripted(_ backend: BackendKind) async throws {
        try await withPipe { pipe in
            let texts = Trace()
            try await onLoopThread(backend) { loop in
                let start = ContinuousClock.now
                loop.addCommonMode("tracking")
                let commonTimer = try Loop.Timer(fireAt: start + .seconds(3600), interval: .seconds(60), order: 1) {
                    _ in
                }
                loop.add(commonTimer, to: .common)
                let commonSource = Loop.Source(order: 5) {}
                loop.add(commonSource, to: .common)
                let signalled = Loop.Source(order: -1) {}
                loop.add(signalled, to: .default)
                signalled.signal()
                let descriptor = try Loop.Source(fileDescriptor: pipe.readEnd, interest: .readable) { _ in }
                loop.add(descriptor, to: .default)
                let port = try Loop.Port<Int>()
                let portSource = Loop.Source(port: port, order: 2) { _ in }
                loop.add(portSource, to: .default)
                // Rounded up to whole seconds.
                let once = try Loop.Timer(fireAt: start + .milliseconds(7500), tolerance: .milliseconds(250)) { _ in }
                loop.add(once, to: .default)
                // Added in reverse order: listed by order.
                loop.add(Loop.Observer(activities: .entry, repeats: false, order: 3) { _, _ in }, to: .default)
                loop.add(Loop.Observer(activities: [.beforeWaiting, .afterWaiting]) { _, _ in }, to: .default)
                loop.perform(in: ["paused"]) {}
                loop.perform(in: ["tracking"]) { texts(loop.debugDescription(now: start)) }
                loop.perform {
                    texts(loop.debugDescription(now: start))
                    loop.run("tracking", timeout: .zero)
                    loop.stop()
                }
                texts(loop.debugDescription(now: start))
                loop.run(timeout: generousDeadline)
                for item in [commonSource, signalled, descriptor, portSource] { item.invalidate() }
                commonTimer.invalidate()
                once.invalidate()
            }
            let fd = pipe.readEnd
            // Idle, before the run: every block queued, the one-shot entry observer still there.
            let idle = described(
                backend, fd, mode: "none (not running)", queued: 3, entry: true, inDefault: 1, inTracking: 2)
            // In the first drain of the default run: the block describing is running (not queued),
            // the source is not performed yet, and the one-shot entry observer is gone.
            let running = described(
                backend, fd, mode: "\"kRunLoopDefaultMode\"", queued: 2, entry: false, inDefault: 0, inTracking: 1)
            // In the tracking run nested in that block, in its drain: the tracking block is running.
            let nested = described(
                backend, fd, mode: "\"tracking\", nested in \"kRunLoopDefaultMode\"", queued: 1, entry: false,
                inDefault: 0, inTracking: 0)
            #expect(texts.all == [idle, running, nested])
        }
    }

    @Test("describes a sleeping loop from another thread, timers rounded up to whole seconds", arguments: backends)
    func sleepingFromAnotherThread(_ backend: BackendKind) async throws {
        let asleep = Latch()
        let described = Ref<String>()
        try await onLoopThread(backend) { loop in
            let timer = try Loop.Timer(after: .seconds(3600), repeating: .seconds(3600)) { _ in }
            loop.add(timer, to: .default)
            loop.add(Loop.Observer(activities: .beforeWaiting) { _, _ in asleep.open() }, to: .default)
            _ = try TestThread {
                // Either way the loop is stopped: a run left to its deadline would hold the test
                // for minutes. A missing description fails the test below.
                guard asleep.wait(for: hangDeadline) else { return loop.stop() }
                // The observer runs just before the loop sleeps; nothing else can wake it.
                guard spinUntilWaiting(loop) else { return loop.stop() }
                described.value = loop.debugDescription
                loop.stop()
            }
            loop.run(timeout: generousDeadline)
            timer.invalidate()
        }
        let description = try #require(
            described.value, "the loop was never described asleep: it did not reach its sleep")
        let lines = description.split(separator: "\n").map(String.init)
        #expect(lines.count == 14)
        #expect(lines.dropFirst().prefix(2) == ["  current mode: \"kRunLoopDefaultMode\"", "  waiting: yes"])
        #expect(lines.contains("      fires in 3600 s, every 3600 s, tolerance 0 s, order 0"))
    }
}

/// The scripted loop's description at one moment: the current mode, the blocks queued (in all,
/// for the default mode, for tracking; one stays queued for "paused") and whether the one-shot
/// entry observer is still there differ, the rest is the script's.
private func described(
    _ backend: BackendKind, _ fd: Int32, mode: String, queued: Int, entry: Bool, inDefault: Int, inTracking: Int
) -> String {
    let entryObserver = entry ? "\n      activities entry, order 3, once" : ""
    return """
        Loop(\(backend)) {
          current mode: \(mode)
          waiting: no
          common modes: "kRunLoopDefaultMode", "tracking"
          common items:
            source: version 0, order 5
            timer: fires in 3600 s, every 60 s, tolerance 0 s, order 1
          queued blocks: \(queued)
          mode "kRunLoopDefaultMode":
            sources:
              version 0, order -1, signalled
              descriptor \(fd), readable, order 0
              port, order 2
              version 0, order 5
            timers:
              fires in 8 s, once, tolerance 250 ms, order 0
              fires in 3600 s, every 60 s, tolerance 0 s, order 1
            observers:
              activities [beforeWaiting, afterWaiting], order 0, repeats\(entryObserver)
            queued blocks: \(inDefault)
          mode "paused":
            sources: none
            timers: none
            observers: none
            queued blocks: 1
          mode "tracking":
            sources:
              version 0, order 5
            timers:
              fires in 3600 s, every 60 s, tolerance 0 s, order 1
            observers: none
            queued blocks: \(inTracking)
        }
        """
}
