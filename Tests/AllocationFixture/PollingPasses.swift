import RunLoopKit

/// A block's captured state: one closure context per block.
final class Tally: @unchecked Sendable {
    // Touched by the loop's thread only.
    var count = 0
}

/// Passes that poll (`run(mode, timeout: .zero)`), and posted blocks, on the loop's thread.
///
/// - passes: 10,000 polls of a mode with one version-0 source, one timer and one observer of
///   every activity: no allocation at all.
/// - passes, watched: the same while a stall monitor watches the loop (its thread counted too,
///   but it looks only every half hour): none either.
/// - signals: 10,000 times `signal()` on that source and a pass that performs it: none.
/// - blocks: 10,000 blocks posted with `perform { }` and drained: at most the block's own
///   closure context each.
/// - blocks in modes: the same with `perform(in: [.default]) { }`: the same, at most the
///   closure (the literal is a `Loop.ModeSet`, a bit mask: it allocates nothing).
///
/// Each measurement first warms up (buffers reach their steady size); a queue that grows to
/// hold 10,000 blocks may allocate a few dozen times more, which `slack` allows.
func measurePollingPasses(_ loop: Loop, _ backend: BackendKind) throws {
    let slack = 64
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
        backend, "passes", allocations { for _ in 0..<passes { _ = loop.run(mode, timeout: .zero) } }.total,
        per: passes, allowed: 0)

    let monitor = try StallMonitor(loop: loop, threshold: .seconds(3600)) { _ in }
    for _ in 0..<1_000 { _ = loop.run(mode, timeout: .zero) }
    check(
        backend, "passes, watched",
        allocations { for _ in 0..<passes { _ = loop.run(mode, timeout: .zero) } }.total, per: passes, allowed: 0)
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
        }.total, per: passes, allowed: 0)

    let blocks = 10_000
    let tally = Tally()
    for _ in 0..<blocks { loop.perform { tally.count += 1 } }
    _ = loop.run(.default, timeout: .zero)
    check(
        backend, "blocks",
        allocations {
            for _ in 0..<blocks { loop.perform { tally.count += 1 } }
            _ = loop.run(.default, timeout: .zero)
        }.total, per: blocks, allowed: blocks + slack)
    check(
        backend, "blocks in modes",
        allocations {
            for _ in 0..<blocks { loop.perform(in: [.default]) { tally.count += 1 } }
            _ = loop.run(.default, timeout: .zero)
        }.total, per: blocks, allowed: blocks + slack)
    if tally.count != 3 * blocks { fail("\(backend): \(tally.count) blocks ran, not \(3 * blocks)") }
}
