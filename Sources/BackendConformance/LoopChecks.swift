import RunLoopCore
import Synchronization

extension BackendConformance {
    /// A loop made with the factory, on the check's own thread (a `LoopThread` for the last).
    static var loopScenarioChecks: [Check] {
        [
            Check("a loop on the backend fires a timer, not before its instant", loopTimer),
            Check("a loop on the backend handles a descriptor source made ready while it sleeps", loopDescriptor),
            Check("a version-0 signal from another thread wakes the sleeping loop", loopSignal),
            Check("cross-thread wake race: no signal or block posted to the loop is lost", loopWakeRace),
            Check("a LoopThread runs on the backend", loopThread),
        ]
    }

    /// The calling thread's loop, made with the context's factory; the thread must have none.
    static func makeLoop(_ context: Context) throws -> Loop {
        try expect(Loop.currentIfCreated == nil, "a fresh thread with no loop", observed: "it had one")
        do {
            return try Loop.current(creatingWith: context.factory)
        } catch {
            throw Mismatch(
                expected: "Loop.current(creatingWith:) to make a \(context.factory.kind) loop",
                observed: "it threw \(error)")
        }
    }

    private static func loopTimer(_ context: Context) throws {
        let loop = try makeLoop(context)
        let fired = Lock<[ContinuousClock.Instant]>([])
        let fireAt = ContinuousClock.now + .milliseconds(2)
        loop.add(try Loop.Timer(fireAt: fireAt) { _ in fired.withLock { $0.append(.now) } }, to: .default)
        // The one-shot timer is the mode's only item: once it fired the mode is empty.
        let result = loop.run(.default, timeout: context.deadline)
        let instants = fired.withLock { $0 }
        try expect(
            result == .finished && instants.count == 1,
            "the run to end finished, after the timer fired once", observed: "\(result), fired \(instants.count) times")
        try expect(
            instants[0] >= fireAt, "the timer not to fire before its instant",
            observed: "it fired \(fireAt - instants[0]) early")
    }

    private static func loopDescriptor(_ context: Context) throws {
        let loop = try makeLoop(context)
        let pipe = try KitPipe()
        defer { pipe.close() }
        let heard = Lock<[Readiness]>([])
        let source = try Loop.Source(fileDescriptor: pipe.readEnd) { readiness in
            heard.withLock { $0.append(readiness) }
            pipe.drain()
        }
        loop.add(source, to: .default)
        defer { source.invalidate() }
        // The byte is written once the loop is about to sleep: the backend must wake it.
        let sleeping = Gate()
        loop.add(Loop.Observer(activities: .beforeWaiting, repeats: false) { _, _ in sleeping.open() }, to: .default)
        let writer = try Helper {
            guard sleeping.wait(for: context.deadline) else { return }
            pipe.fill()
        }
        let result = loop.run(.default, timeout: context.deadline, returnAfterSourceHandled: true)
        writer.join(within: context.deadline)
        let readiness = heard.withLock { $0 }
        try expect(
            result == .handledSource && readiness.count == 1 && readiness[0].contains(.readable),
            "the run to return handledSource after the handler heard [readable] once",
            observed: "\(result), the handler heard \(readiness)")
    }

    private static func loopSignal(_ context: Context) throws {
        let loop = try makeLoop(context)
        let performed = Atomic<Int>(0)
        let source = Loop.Source { performed.add(1, ordering: .relaxed) }
        loop.add(source, to: .default)
        defer { source.invalidate() }
        let sleeping = Gate()
        loop.add(Loop.Observer(activities: .beforeWaiting, repeats: false) { _, _ in sleeping.open() }, to: .default)
        let signaller = try Helper {
            guard sleeping.wait(for: context.deadline) else { return }
            source.signal()
        }
        let result = loop.run(.default, timeout: context.deadline, returnAfterSourceHandled: true)
        signaller.join(within: context.deadline)
        let count = performed.load(ordering: .relaxed)
        try expect(
            result == .handledSource && count == 1, "the run to return handledSource after performing the source once",
            observed: "\(result), performed \(count) times")
    }

    private static func loopThread(_ context: Context) throws {
        let thread: LoopThread
        do {
            thread = try LoopThread(name: "conformance-3", backend: context.factory)
        } catch {
            throw Mismatch(
                expected: "LoopThread(backend:) to start a \(context.factory.kind) loop", observed: "it threw \(error)")
        }
        defer { thread.stop() }
        let ran = Atomic<Bool>(false)
        let onItsThread = Atomic<Bool>(false)
        let loop = thread.loop
        thread.perform(waitUntilDone: true) {
            ran.store(true, ordering: .relaxed)
            onItsThread.store(Loop.currentIfCreated === loop, ordering: .relaxed)
        }
        try expect(
            loop.backend == context.factory.kind && ran.load(ordering: .relaxed)
                && onItsThread.load(ordering: .relaxed),
            "a \(context.factory.kind) loop that ran the block on its own thread",
            observed:
                "a \(loop.backend) loop; ran \(ran.load(ordering: .relaxed)), on its thread \(onItsThread.load(ordering: .relaxed))"
        )
    }
}
