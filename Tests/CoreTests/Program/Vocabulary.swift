import RunLoopKit

/// The modes a program uses: `default`, two others, and the `common` pseudo-mode.
enum ModeName: Int, CaseIterable, Hashable, Sendable, Comparable, CustomStringConvertible {
    case `default`, a, b, common

    /// The modes that can be run or made common (not `common` itself).
    static let concrete: [ModeName] = [.default, .a, .b]

    var loopMode: Loop.Mode {
        switch self {
        case .default: .default
        case .a: "A"
        case .b: "B"
        case .common: .common
        }
    }

    /// The name a trace uses for a mode Core hands to a callback.
    static func name(of mode: Loop.Mode) -> String {
        allCases.first { $0.loopMode == mode }?.description ?? mode.name
    }

    var description: String {
        switch self {
        case .default: "default"
        case .a: "A"
        case .b: "B"
        case .common: "common"
        }
    }

    static func < (lhs: ModeName, rhs: ModeName) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The activities an observer can watch; the raw values are how Core's `Activity` prints them.
enum ActivityName: String, CaseIterable, Hashable, Sendable {
    case entry, beforeTimers, beforeSources, beforeWaiting, afterWaiting, exit

    var activity: Loop.Activity {
        switch self {
        case .entry: .entry
        case .beforeTimers: .beforeTimers
        case .beforeSources: .beforeSources
        case .beforeWaiting: .beforeWaiting
        case .afterWaiting: .afterWaiting
        case .exit: .exit
        }
    }
}

/// What a descriptor can be ready for, as a program sets it; the raw values are how Core's
/// `Readiness` prints them.
enum ReadinessName: String, CaseIterable, Hashable, Sendable, Comparable {
    case readable, writable, hangup, error

    var readiness: Readiness {
        switch self {
        case .readable: .readable
        case .writable: .writable
        case .hangup: .hangup
        case .error: .error
        }
    }

    static func < (lhs: ReadinessName, rhs: ReadinessName) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// As Core's `Readiness` prints a set: `[readable, hangup]`.
    static func describe(_ names: Set<ReadinessName>) -> String {
        "[" + names.sorted().map(\.rawValue).joined(separator: ", ") + "]"
    }
}

/// What a descriptor source watches for.
enum InterestName: String, CaseIterable, Hashable, Sendable {
    case readable, writable, both

    var interest: Interest {
        switch self {
        case .readable: .readable
        case .writable: .writable
        case .both: [.readable, .writable]
        }
    }

    /// The readiness a backend reports for this interest: what was asked, hang-ups and errors
    /// whatever was asked.
    var reported: Set<ReadinessName> {
        switch self {
        case .readable: [.readable, .hangup, .error]
        case .writable: [.writable, .hangup, .error]
        case .both: Set(ReadinessName.allCases)
        }
    }
}

/// An item of a program: a slot of its kind (s0, d1, t1, o2). `source` is a version-0 source,
/// `descriptor` a version-1 source watching a descriptor of its own.
enum ItemRef: Hashable, Sendable, CustomStringConvertible {
    case source(Int)
    case descriptor(Int)
    case timer(Int)
    case observer(Int)

    var description: String {
        switch self {
        case let .source(index): "s\(index)"
        case let .descriptor(index): "d\(index)"
        case let .timer(index): "t\(index)"
        case let .observer(index): "o\(index)"
        }
    }
}

/// One operation: a step of a program, or what a callout does. Times are milliseconds on the
/// virtual clock.
enum Action: Hashable, Sendable, CustomStringConvertible {
    case none
    case add(ItemRef, ModeName)
    case remove(ItemRef, ModeName)
    case invalidate(ItemRef)
    case signal(source: Int)
    /// `signal()` on a descriptor source, which has no effect (D5).
    case signalDescriptor(Int)
    /// Sets a timer's next fire instant to now + `fromNow` (which may be negative).
    case setFireInstant(timer: Int, fromNow: Int)
    /// Changes a timer's tolerance (`setTolerance`), in ms.
    case setTolerance(timer: Int, milliseconds: Int)
    /// What descriptor source `descriptor`'s descriptor is ready for from now on (empty: not
    /// ready); it stays so until set again (level-triggered).
    case setReadiness(descriptor: Int, Set<ReadinessName>)
    /// Queues a block for `modes` that does the program's block action `action`.
    case perform(modes: Set<ModeName>, action: Int)
    /// Runs the loop; a timeout of zero or less polls, `nil` runs without a time limit.
    case run(ModeName, timeout: Int?, returnAfterSourceHandled: Bool)
    case stop
    case wakeUp
    case addCommonMode(ModeName)
    /// Lets time pass, as a callout that works for a while would.
    case advanceClock(Int)

    var description: String {
        switch self {
        case .none: "nothing"
        case let .add(item, mode): "add \(item) to \(mode)"
        case let .remove(item, mode): "remove \(item) from \(mode)"
        case let .invalidate(item): "invalidate \(item)"
        case let .signal(source): "signal s\(source)"
        case let .signalDescriptor(index): "signal d\(index)"
        case let .setFireInstant(timer, fromNow):
            "set t\(timer).nextFireInstant = now\(fromNow < 0 ? "" : "+")\(fromNow)ms"
        case let .setTolerance(timer, milliseconds): "set t\(timer).tolerance = \(milliseconds)ms"
        case let .setReadiness(descriptor, readiness):
            readiness.isEmpty
                ? "d\(descriptor)'s descriptor becomes not ready"
                : "d\(descriptor)'s descriptor becomes ready: \(ReadinessName.describe(readiness))"
        case let .perform(modes, action):
            "perform block#\(action) in [\(modes.sorted().map(\.description).joined(separator: ", "))]"
        case let .run(mode, timeout, once):
            "run \(mode) \(timeout.map { "timeout \($0)ms" } ?? "without timeout")\(once ? " returnAfterSourceHandled" : "")"
        case .stop: "stop"
        case .wakeUp: "wakeUp"
        case let .addCommonMode(mode): "addCommonMode \(mode)"
        case let .advanceClock(milliseconds): "advance the clock \(milliseconds)ms"
        }
    }

    /// The items and block actions this action refers to (for printing only what matters).
    var references: (items: [ItemRef], blockAction: Int?) {
        switch self {
        case let .add(item, _), let .remove(item, _), let .invalidate(item): ([item], nil)
        case let .signal(source): ([.source(source)], nil)
        case let .setFireInstant(timer, _), let .setTolerance(timer, _): ([.timer(timer)], nil)
        case let .setReadiness(descriptor, _), let .signalDescriptor(descriptor): ([.descriptor(descriptor)], nil)
        case let .perform(_, action): ([], action)
        default: ([], nil)
        }
    }
}
