extension Loop: CustomDebugStringConvertible {
    /// A readable dump of the loop, for debugging: its current mode and runs, whether it is
    /// waiting, its common modes and common items, and for each mode (by name) its sources,
    /// timers and observers (each list by order, then in the order the items were made or
    /// added) and how many queued blocks would run in it.
    ///
    /// Timers show when they fire next relative to now, rounded up to a whole second, millisecond
    /// or microsecond. The rendering is deterministic for a given loop, so it can be compared in
    /// tests and logs. Safe to call from any thread, while the loop runs or not: it takes the
    /// loop's locks briefly, one at a time, and calls no user code. The format is for people and
    /// may change between versions; do not parse it.
    public var debugDescription: String { debugDescription(now: now) }

    /// ``debugDescription`` with timers' next fire times relative to `now` (tests pass a fixed
    /// instant, so that the rendering does not depend on how long the test took).
    package func debugDescription(now: ContinuousClock.Instant) -> String {
        let snapshot = state.withLock { DescriptionSnapshot($0) }
        let commonModes = Set(snapshot.commonModes)
        var lines: [String] = ["\(self) {"]
        if let current = snapshot.runs.last {
            let enclosing = snapshot.runs.dropLast().map { "\"\($0)\"" }
            lines.append(
                "  current mode: \"\(current)\""
                    + (enclosing.isEmpty ? "" : ", nested in " + enclosing.reversed().joined(separator: " in ")))
        } else {
            lines.append("  current mode: none (not running)")
        }
        lines.append("  waiting: \(sleep.isAsleep ? "yes" : "no")")
        lines.append("  common modes: " + snapshot.commonModes.map { "\"\($0)\"" }.joined(separator: ", "))
        if isMain { lines.append("  main queue: served in the common modes") }
        let commonItems =
            snapshot.commonSources.map { "source: " + describe($0) }
            + snapshot.commonTimers.map { "timer: " + describe($0, now: now) }
            + snapshot.commonObservers.map { "observer: " + describe($0) }
        lines.append("  common items:" + (commonItems.isEmpty ? " none" : ""))
        lines += commonItems.map { "    " + $0 }
        lines.append("  queued blocks: \(blocks.queuedCount)")
        for items in snapshot.modes {
            lines.append("  mode \"\(items.mode)\":")
            lines += section("sources", items.sources.map(describe))
            lines += section("timers", items.timers.map { describe($0, now: now) })
            lines += section("observers", items.observers.map(describe))
            let queued = blocks.queuedCount(runningIn: items.mode, modeIsCommon: commonModes.contains(items.mode))
            lines.append("    queued blocks: \(queued)")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    private func section(_ title: String, _ entries: [String]) -> [String] {
        guard !entries.isEmpty else { return ["    \(title): none"] }
        return ["    \(title):"] + entries.map { "      " + $0 }
    }

    private func describe(_ source: Source) -> String {
        switch source.kind {
        case .signalled: "version 0, order \(source.order)" + (source.isSignalled ? ", signalled" : "")
        case let .descriptor(fd, interest, _): "descriptor \(fd), \(interest), order \(source.order)"
        case .port: "port, order \(source.order)"
        }
    }

    /// Reads the timer's own state under its lock, which comes before the loop's: never
    /// called with the loop's lock held.
    private func describe(_ timer: Timer, now: ContinuousClock.Instant) -> String {
        let (instant, tolerance, isFiring) = timer.state.withLock { ($0.fireInstant, $0.tolerance, $0.isFiring) }
        let when =
            isFiring
            ? "firing now"
            : instant > now
                ? "fires in \(DurationText.approximate(instant - now, roundingUp: true))"
                : "due \(DurationText.approximate(now - instant, roundingUp: false)) ago"
        let repeats = timer.interval.map { "every \(DurationText.exact($0))" } ?? "once"
        return "\(when), \(repeats), tolerance \(DurationText.exact(tolerance)), order \(timer.order)"
    }

    private func describe(_ observer: Observer) -> String {
        "activities \(observer.activities), order \(observer.order), \(observer.repeats ? "repeats" : "once")"
    }
}

/// What a loop's description shows, copied under the loop's lock (item references only:
/// their own state is read after the lock is released).
private struct DescriptionSnapshot {
    struct ModeItems {
        let mode: Loop.Mode
        let sources: [Loop.Source]
        let timers: [Loop.Timer]
        let observers: [Loop.Observer]
    }

    let runs: [Loop.Mode]
    let commonModes: [Loop.Mode]
    let commonSources: [Loop.Source]
    let commonTimers: [Loop.Timer]
    let commonObservers: [Loop.Observer]
    let modes: [ModeItems]

    init(_ state: borrowing LoopState) {
        runs = state.runs.filter { $0.kind == .run }.map(\.mode)
        commonModes = state.commonModes.sorted { $0.name < $1.name }
        commonSources = Self.byOrder(state.commonSources.inOrder, order: \.order)
        commonTimers = Self.byOrder(state.commonTimers.inOrder, order: \.order)
        commonObservers = Self.byOrder(state.commonObservers.inOrder, order: \.order)
        var modes: [ModeItems] = []
        for (mode, items) in state.modes where mode != .common {
            let sources = (Array(items.versionZero.values) + Array(items.versionOne.values)).sorted {
                $0.order != $1.order ? $0.order < $1.order : $0.sequence < $1.sequence
            }
            let timers = items.timers.values.sorted {
                $0.order != $1.order
                    ? $0.order < $1.order
                    : $0.addSequence.load(ordering: .relaxed) < $1.addSequence.load(ordering: .relaxed)
            }
            // Observers are kept by order, ties in the order they were added.
            modes.append(ModeItems(mode: mode, sources: sources, timers: timers, observers: items.observers))
        }
        self.modes = modes.sorted { $0.mode.name < $1.mode.name }
    }

    /// `items` (in the order they were added) by order, ties kept in that order.
    private static func byOrder<Item>(_ items: [Item], order: (Item) -> Int) -> [Item] {
        items.enumerated().sorted { a, b in
            order(a.element) != order(b.element) ? order(a.element) < order(b.element) : a.offset < b.offset
        }.map(\.element)
    }
}

/// Durations as a loop's description writes them.
enum DurationText {
    private static let units: [(nanoseconds: Int64, name: String)] = [
        (1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns"),
    ]

    /// In the largest unit that holds it exactly: `1 s`, `1500 ms`, `250 µs`, `0 s`.
    static func exact(_ duration: Duration) -> String {
        let nanoseconds = Nanoseconds.of(duration)
        guard nanoseconds != 0 else { return "0 s" }
        let unit = units.first { nanoseconds % $0.nanoseconds == 0 }!
        return "\(nanoseconds / unit.nanoseconds) \(unit.name)"
    }

    /// In the largest unit it reaches, rounded up or down to a whole one: `3600 s`, `12 ms`.
    static func approximate(_ duration: Duration, roundingUp: Bool) -> String {
        let nanoseconds = max(0, Nanoseconds.of(duration))
        let unit = units.first { nanoseconds >= $0.nanoseconds } ?? units[units.count - 1]
        let whole = nanoseconds / unit.nanoseconds
        let value = roundingUp && nanoseconds % unit.nanoseconds != 0 ? whole + 1 : whole
        return "\(value) \(unit.name)"
    }
}
