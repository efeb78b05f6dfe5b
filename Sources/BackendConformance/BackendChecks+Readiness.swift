import Glibc
import RunLoopCore

extension BackendConformance {
    /// What a ready descriptor produces: its token, level-triggered, once per wait, with the
    /// readiness it has.
    static var readinessChecks: [Check] {
        [
            Check("a readable descriptor is reported with its token, as readable", readableWithToken),
            Check("readiness is level-triggered: an unread descriptor is reported by every wait", levelTriggered),
            Check("several ready descriptors are each reported once per wait, with their own tokens", severalReady),
            Check("a writable descriptor is reported with its token, as writable", writable),
            Check("a peer's hang-up is reported to a readable interest", hangup),
        ]
    }

    private static func readableWithToken(_ context: Context) throws {
        let subject = try Subject(context)
        let pipe = try KitPipe()
        defer { pipe.close() }
        try subject.register(pipe.readEnd, 7, .readable)
        pipe.fill()
        try subject.waitForEvents("the pipe's read end, with a byte in it, to be reported")
        try expect(
            subject.tokens == [7] && subject.events[0].readiness.contains(.readable),
            "one event, token #7, readable", observed: subject.events.listed)
        try subject.unregister(pipe.readEnd, 7)
    }

    private static func levelTriggered(_ context: Context) throws {
        let subject = try Subject(context)
        let pipe = try KitPipe()
        defer { pipe.close() }
        try subject.register(pipe.readEnd, 1, .readable)
        pipe.fill()
        for wait in 1...3 {
            try subject.waitForEvents("wait \(wait) to report the unread pipe again")
            try expect(
                subject.tokens == [1], "wait \(wait) to report token #1 (the byte was not read)",
                observed: subject.events.listed)
        }
        pipe.drain()
        try subject.waitOut(.zero)
        try expect(
            subject.events.isEmpty, "no event once the pipe was drained", observed: subject.events.listed)
        try subject.unregister(pipe.readEnd, 1)
    }

    private static func severalReady(_ context: Context) throws {
        let subject = try Subject(context)
        let pipes = try (0..<3).map { _ in try KitPipe() }
        defer { for pipe in pipes { pipe.close() } }
        let tokens: [UInt64] = [21, 22, 23]
        for (pipe, token) in zip(pipes, tokens) {
            try subject.register(pipe.readEnd, token, .readable)
            pipe.fill()
        }
        // A backend may spread them over several waits; each wait reports each at most once.
        var seen: Set<UInt64> = []
        let start = ContinuousClock.now
        while seen.count < tokens.count {
            try expect(
                ContinuousClock.now - start < context.deadline, "all of #21, #22, #23 to be reported",
                observed: "only \(seen.sorted()) within \(context.deadline)")
            try subject.waitOut(context.deadline)
            try expect(
                Set(subject.tokens).count == subject.tokens.count && Set(subject.tokens).isSubset(of: tokens),
                "each of #21, #22, #23 at most once per wait, and no other token", observed: subject.events.listed)
            seen.formUnion(subject.tokens)
        }
        for (pipe, token) in zip(pipes, tokens) { try subject.unregister(pipe.readEnd, token) }
    }

    private static func writable(_ context: Context) throws {
        let subject = try Subject(context)
        let pipe = try KitPipe()
        defer { pipe.close() }
        try subject.register(pipe.writeEnd, 5, .writable)
        try subject.waitForEvents("the pipe's empty write end to be reported")
        try expect(
            subject.tokens == [5] && subject.events[0].readiness.contains(.writable),
            "one event, token #5, writable", observed: subject.events.listed)
        try subject.unregister(pipe.writeEnd, 5)
        // Both interests: only what is ready is reported.
        try subject.register(pipe.writeEnd, 6, [.readable, .writable])
        try subject.waitForEvents("the write end, watched for both, to be reported")
        try expect(
            subject.tokens == [6] && subject.events[0].readiness.contains(.writable)
                && !subject.events[0].readiness.contains(.readable),
            "one event, token #6, writable and not readable", observed: subject.events.listed)
        try subject.unregister(pipe.writeEnd, 6)
    }

    private static func hangup(_ context: Context) throws {
        let subject = try Subject(context)
        let pipe = try KitPipe()
        defer { Glibc.close(pipe.readEnd) }
        try subject.register(pipe.readEnd, 9, .readable)
        pipe.closeWriteEnd()
        try subject.waitForEvents("the read end of a pipe whose write end closed to be reported")
        try expect(
            subject.tokens == [9] && subject.events[0].readiness.contains(.hangup),
            "one event, token #9, with hangup (the handler must learn that the peer closed)",
            observed: subject.events.listed)
        try subject.unregister(pipe.readEnd, 9)
    }
}
