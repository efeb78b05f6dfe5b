import Glibc
import MallocInterposerSwift
import RunLoopKit
import Synchronization
import TestSupport

// Counts a loop's allocations in steady state, and fails when there are more than the loop's
// promise allows. Run it built for release (what programs ship; a debug build allocates in
// unspecialised generic code) with the malloc interposer preloaded, as `scripts/test` does:
//
//     LD_PRELOAD=…/libMallocInterposerSwift.so AllocationFixture BACKEND…
//
// - passes: 10,000 runs of `run(mode, timeout: .zero)` on a mode with one version-0 source,
//   one timer and one observer of every activity: no allocation at all.
// - passes, watched: the same while a stall monitor watches the loop (its thread counted too,
//   but it looks only every half hour): none either.
// - signals: 10,000 times `signal()` on that source and a pass that performs it: none.
// - blocks: 10,000 blocks posted with `perform { }` and drained: at most the block's own
//   closure context each.
// - blocks in modes: the same with `perform(in: [.default]) { }`: the same, at most the
//   closure (the literal is a `Loop.ModeSet`, a bit mask: it allocates nothing).
//
// Each measurement first warms up (buffers reach their steady size); a queue that grows to
// hold 10,000 blocks may allocate a few dozen times more, which `slack` allows.

let slack = 64

/// Allocations made by `body`, counted on every thread.
func allocations(_ body: () -> Void) -> Int {
    MallocInterposerSwift.reset()
    MallocInterposerSwift.hook()
    body()
    MallocInterposerSwift.unhook()
    return MallocInterposerSwift.getStatistics().mallocCount
}

func write(_ line: String, to descriptor: Int32) {
    let text = line + "\n"
    _ = text.utf8CString.withUnsafeBufferPointer { Glibc.write(descriptor, $0.baseAddress, $0.count - 1) }
}

/// A block's captured state: one closure context per block.
final class Tally: @unchecked Sendable {
    // Touched by the loop's thread only.
    var count = 0
}

/// How many checks failed, on any thread.
let failures = Atomic<Int>(0)

func check(_ backend: BackendKind, _ what: String, _ count: Int, per items: Int, allowed: Int) {
    write("\(backend) \(what): \(count) allocations for \(items) (allowed: \(allowed))", to: 1)
    if count > allowed {
        write("FAILED: \(backend) \(what): \(count) allocations for \(items), more than \(allowed)", to: 2)
        failures.add(1, ordering: .relaxed)
    }
}

func measure(_ backend: BackendKind) throws {
    let loop = try Loop.current(backend: backend)
    let mode: Loop.Mode = "measured"
    let source = Loop.Source {}
    let timer = try Loop.Timer(after: .seconds(3600), repeating: .seconds(3600)) { _ in }
    let observer = Loop.Observer(activities: .allActivities) { _, _ in }
    loop.add(source, to: mode)
    loop.add(timer, to: mode)
    loop.add(observer, to: mode)
    defer {
        source.invalidate()
        timer.invalidate()
        observer.invalidate()
    }

    let passes = 10_000
    for _ in 0..<1_000 { _ = loop.run(mode, timeout: .zero) }
    check(
        backend, "passes", allocations { for _ in 0..<passes { _ = loop.run(mode, timeout: .zero) } }, per: passes,
        allowed: 0)

    let monitor = try StallMonitor(loop: loop, threshold: .seconds(3600)) { _ in }
    for _ in 0..<1_000 { _ = loop.run(mode, timeout: .zero) }
    check(
        backend, "passes, watched",
        allocations { for _ in 0..<passes { _ = loop.run(mode, timeout: .zero) } }, per: passes, allowed: 0)
    monitor.stop()

    // A signalled source performed: the signal and the pass that performs it.
    for _ in 0..<1_000 {
        source.signal()
        _ = loop.run(mode, timeout: .zero)
    }
    check(
        backend, "signals",
        allocations {
            for _ in 0..<passes {
                source.signal()
                _ = loop.run(mode, timeout: .zero)
            }
        }, per: passes, allowed: 0)

    let blocks = 10_000
    let tally = Tally()
    for _ in 0..<blocks { loop.perform { tally.count += 1 } }
    _ = loop.run(.default, timeout: .zero)
    check(
        backend, "blocks",
        allocations {
            for _ in 0..<blocks { loop.perform { tally.count += 1 } }
            _ = loop.run(.default, timeout: .zero)
        }, per: blocks, allowed: blocks + slack)
    check(
        backend, "blocks in modes",
        allocations {
            for _ in 0..<blocks { loop.perform(in: [.default]) { tally.count += 1 } }
            _ = loop.run(.default, timeout: .zero)
        }, per: blocks, allowed: blocks + slack)
    if tally.count != 3 * blocks {
        write("FAILED: \(backend): \(tally.count) blocks ran, not \(3 * blocks)", to: 2)
        failures.add(1, ordering: .relaxed)
    }
}

let backends = CommandLine.arguments.dropFirst().map { name -> BackendKind in
    guard let kind = BackendKind(rawValue: name) else { fatalError("AllocationFixture: unknown backend \(name)") }
    return kind
}
guard !backends.isEmpty else { fatalError("usage: AllocationFixture BACKEND…") }

/// Runs `measure(backend)` on a thread of its own (a loop belongs to its thread) and waits.
/// Not main-actor code: the thread's closure must not inherit top-level code's isolation.
nonisolated func measureOnOwnThread(_ backend: BackendKind) throws {
    try PThread.spawn {
        do { try measure(backend) } catch BackendError.unavailable(_, let why) where !isRequired(backend) {
            // As in the test suites: a backend this machine cannot start is skipped, said,
            // unless RUNLOOPKIT_REQUIRED_BACKENDS lists it (then it fails, below).
            write("\(backend): skipped, it cannot start here: \(why)", to: 1)
        } catch {
            write("FAILED: \(backend): \(error)", to: 2)
            failures.add(1, ordering: .relaxed)
        }
    }.join()
}

for backend in backends { try measureOnOwnThread(backend) }
exit(failures.load(ordering: .relaxed) == 0 ? 0 : 1)
