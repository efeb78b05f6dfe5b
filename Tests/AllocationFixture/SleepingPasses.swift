import Glibc
import RunLoopKit
import Synchronization

/// Passes that sleep and are woken, on the loop's thread: by a timer, by a readable
/// descriptor, and by `perform` from another thread. Each kind runs in rounds (one run of the
/// loop, one sleep, one wake) until `wanted` of its sleeps ended for the reason it measures, as
/// the loop's statistics count them; the other rounds (a timer already due when its run began,
/// on a loaded machine) are counted with them, and allocate nothing either.
///
/// The budgets: none on the loop's thread for any kind (a wake, the wait, the pass and its
/// handler or block allocate nothing in steady state), and none in the whole process either:
/// the other thread posts one block made once and reused (`perform` keeps it, allocating
/// nothing), or writes one byte to a pipe. The process-wide count includes that other thread,
/// the loop's thread is also counted alone (``allocations(attributedTo:_:)``), so a failure
/// says whose allocation it was.
struct SleepingPasses {
    let loop: Loop
    let backend: BackendKind
    /// Sleeps of each kind that must have ended for the reason measured.
    let wanted = 500
    /// Rounds counted in one measurement; the statistics are read between measurements.
    private let roundsPerChunk = 50
    /// The most rounds a kind may take to reach `wanted` sleeps of its reason.
    private var roundLimit: Int { 20 * wanted }

    /// A timer every millisecond whose handler stops the run: each run sleeps until it fires.
    func wokenByTimer() throws {
        let mode: Loop.Mode = "woken by a timer"
        let loop = self.loop
        let timer = try Loop.Timer(after: .milliseconds(1), repeating: .milliseconds(1)) { _ in loop.stop() }
        loop.add(timer, to: mode)
        defer { timer.invalidate() }
        measure("passes woken by a timer", reason: \.wakeups[.timer]) {
            let result = loop.run(mode, timeout: .seconds(60))
            return result == .stopped ? nil : "a run ended \(result), not stopped by its timer"
        }
    }

    /// A pipe's read end watched; another thread writes a byte each time the loop sleeps, and
    /// the handler reads it: each run (returning after a source handled) sleeps until then.
    func wokenByDescriptor() throws {
        let mode: Loop.Mode = "woken by a descriptor"
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw SystemError("pipe", errno: errno) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        _ = fcntl(readEnd, F_SETFL, O_NONBLOCK)
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let served = Served()
        let source = try Loop.Source(fileDescriptor: readEnd) { _ in
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            served.count.add(1, ordering: .relaxed)
        }
        loop.add(source, to: mode)
        defer { source.invalidate() }
        let loop = self.loop
        try withPoster(served) {
            var byte: UInt8 = 1
            _ = Glibc.write(writeEnd, &byte, 1)
        } body: {
            measure("passes woken by a descriptor", reason: \.wakeups[.source]) {
                let result = loop.run(mode, timeout: .seconds(60), returnAfterSourceHandled: true)
                return result == .handledSource ? nil : "a run ended \(result), not after handling the pipe"
            }
        }
    }

    /// Another thread posts a block each time the loop sleeps; the block stops the run. The
    /// block is made once and posted again each time: posting it allocates nothing.
    func wokenByPerform() throws {
        let mode: Loop.Mode = "woken by perform"
        // Keeps the mode alive while it has no block queued.
        let keepAlive = Loop.Source {}
        loop.add(keepAlive, to: mode)
        defer { keepAlive.invalidate() }
        let served = Served()
        let loop = self.loop
        let block: @Sendable () -> Void = {
            served.count.add(1, ordering: .relaxed)
            loop.stop()
        }
        try withPoster(served) {
            loop.perform(in: [mode], block)
        } body: {
            measure("passes woken by perform from another thread", reason: \.wakeups[.woken]) {
                let result = loop.run(mode, timeout: .seconds(60))
                return result == .stopped ? nil : "a run ended \(result), not stopped by the posted block"
            }
        }
    }

    /// Runs `round` (one run of the loop; returns why it went wrong, or nil) after a warm-up,
    /// counting allocations, until `wanted` sleeps ended for `reason`; then checks the budgets.
    private func measure(
        _ what: String, reason: KeyPath<Loop.Statistics, UInt64>, round: () -> String?
    ) {
        for _ in 0..<roundsPerChunk {
            if let problem = round() { return fail("\(backend) \(what): warming up, \(problem)") }
        }
        let before = loop.statistics
        var counted = AllocationCount()
        var rounds = 0
        var problem: String?
        while loop.statistics[keyPath: reason] - before[keyPath: reason] < wanted, rounds < roundLimit,
            problem == nil
        {
            counted += allocations {
                for _ in 0..<roundsPerChunk where problem == nil { problem = round() }
            }
            rounds += roundsPerChunk
        }
        let after = loop.statistics
        let woken = after[keyPath: reason] - before[keyPath: reason]
        if let problem { return fail("\(backend) \(what): \(problem)") }
        report(
            "\(backend) \(what): \(rounds) runs, \(woken) woken for that reason, \(after.wakeups.total - before.wakeups.total) wakeups in all, \(after.passes - before.passes) passes"
        )
        if woken < wanted {
            fail(
                "\(backend) \(what): only \(woken) of \(rounds) runs slept and were woken for the reason measured (wanted \(wanted))"
            )
        }
        if after.wakeups[.spurious] != before.wakeups[.spurious] {
            fail("\(backend) \(what): \(after.wakeups[.spurious] - before.wakeups[.spurious]) spurious wakeups")
        }
        check(backend, "\(what), on the loop's thread", counted.onThread, per: rounds, allowed: 0)
        check(backend, "\(what), in the whole process", counted.total, per: rounds, allowed: 0)
    }

    /// Runs `body` while another thread calls `post` each time the loop sleeps after the last
    /// post was served (counted by `served`).
    private func withPoster(
        _ served: Served, post: @escaping @Sendable () -> Void, body: () -> Void
    ) throws {
        let loop = self.loop
        let poster = try PThread.spawn {
            var posted = 0
            while !served.finished.load(ordering: .acquiring) {
                guard served.count.load(ordering: .relaxed) == posted, loop.isWaiting else {
                    sched_yield()
                    continue
                }
                post()
                posted += 1
            }
        }
        body()
        served.finished.store(true, ordering: .releasing)
        poster.join()
    }
}

/// How many posts the loop has served, and whether the poster is to stop.
final class Served: Sendable {
    let count = Atomic<Int>(0)
    let finished = Atomic<Bool>(false)
}
