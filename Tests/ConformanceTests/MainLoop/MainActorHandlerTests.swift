import Glibc
import RunLoopKit
import TestSupport
import Testing

/// Behaviour contract (Sources/Core/RunLoopKit.docc/BehaviourContract.md) › I3: items belong to
/// a loop; X3: misuse traps. A handler written in main-actor code is main-actor code: the main
/// loop runs it on the main thread (checked), and every other loop refuses it with a message.
///
/// The main loop runs only on the process's main thread (the test runner's belongs to
/// libdispatch), so the running side is a child program (Tests/MainLoopFixture).
@Suite("Main-actor handlers")
struct MainActorHandlerTests {
    /// What each handler records, in the order they hand on to one another.
    static let handled = [
        "observer entry on main: true",
        "timer on main: true",
        "version-0 source on main: true",
        "port hello on main: true",
        "descriptor [readable] on main: true",
        "block on main: true",
        "observer exit on main: true",
        "run: stopped",
    ]

    @Test("handlers written in main-actor code run on the main loop, checked, in order", arguments: backends)
    func runOnMainLoop(_ backend: BackendKind) async throws {
        #expect(try await runMainLoopFixture(backend, "main-actor-handlers") == Self.handled)
    }

    @Test(
        "handlers written in main-actor code run on the main loop with LoopExecutorFactory installed",
        arguments: backends)
    func runOnMainLoopWithFactory(_ backend: BackendKind) async throws {
        #expect(
            try await runMainLoopFixture(backend, "main-actor-handlers-factory") == ["installed: true"] + Self.handled)
    }

    /// What each refusal names, by the kind of item or block given to a loop that is not main.
    static let refusals: [String: [String]] = [
        "timer": ["Loop.add(_:to:): Timer(one-shot, order 0) has a main-actor handler"],
        "observer": ["Loop.add(_:to:): Observer(", "has a main-actor handler"],
        "source": ["Loop.add(_:to:): Source(version 0, order 0) has a main-actor handler"],
        "port source": ["Loop.add(_:to:): Source(port fd", "has a main-actor handler"],
        "block": ["Loop.perform: a block has a main-actor handler"],
    ]

    @Test(
        "a timer, observer, source, port source or block with a main-actor handler given to another loop traps, naming both",
        arguments: backends, refusals.keys.sorted())
    func mainActorHandlerRefused(_ backend: BackendKind, _ item: String) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            [backend, item] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let worker = try LoopThread(name: "worker", backend: backend)
            switch item {
            case "timer": worker.loop.add(try Loop.Timer(after: .seconds(1)) { @MainActor _ in }, to: .default)
            case "observer": worker.loop.add(Loop.Observer(activities: .entry) { @MainActor _, _ in }, to: .default)
            case "source": worker.loop.add(Loop.Source { @MainActor in }, to: .default)
            case "port source":
                let port = try Loop.Port<Int>()
                worker.loop.add(Loop.Source(port: port) { @MainActor _ in }, to: .default)
            default: worker.loop.perform { @MainActor in }
            }
        }
        let text = errorText(of: result)
        for named in Self.refusals[item, default: []] + ["Loop(\(backend)) cannot run it"] {
            #expect(text.contains(named))
        }
    }

    @Test("a handler isolated to an actor whose executor is not the loop is refused", arguments: backends)
    func otherActorRefused(_ backend: BackendKind) async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [backend] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            let worker = try LoopThread(name: "worker", backend: backend)
            await TimerMaker().addTimer(to: worker.loop)
        }
        let text = errorText(of: result)
        #expect(text.contains("has a handler isolated to"))
        #expect(text.contains("whose executor is not this loop"))
    }

    @Test("a handler isolated to an actor whose executor is the loop runs there", arguments: backends)
    func loopActorRuns(_ backend: BackendKind) async throws {
        try await withWorker(LoopThread(name: "worker", backend: backend)) { worker in
            let actor = LoopActor(worker.loop)
            let fired = Latch()
            await actor.addTimer(signalling: fired)
            #expect(await fired.waitOffPool())
            #expect(await actor.count == 1)
        }
    }

    @Test("nonisolated handlers stay nonisolated: any loop runs them", arguments: backends)
    func nonisolatedRunsAnywhere(_ backend: BackendKind) async throws {
        try await offThePool {
            let worker = try LoopThread(name: "worker", backend: backend)
            let fired = Latch()
            let onWorker = AtomicInt()
            let loop = worker.loop
            worker.loop.add(
                try Loop.Timer(after: .milliseconds(1)) { _ in
                    if Loop.currentIfCreated === loop { onWorker.increment() }
                    fired.open()
                }, to: .default)
            #expect(fired.wait())
            #expect(onWorker.value == 1)
            worker.stop()
        }
    }
}

/// An actor on the default executor whose timer handler captures it, and so is isolated to it.
private actor TimerMaker {
    var ticks = 0
    func addTimer(to loop: Loop) {
        loop.add(try! Loop.Timer(after: .seconds(1)) { _ in self.ticks += 1 }, to: .default)
    }
}

/// A handler isolated to an actor whose executor is a loop runs on that loop, checked.
extension LoopActor {
    fileprivate func addTimer(signalling fired: Latch) {
        loop.add(
            try! Loop.Timer(after: .milliseconds(1)) { _ in
                self.count += 1
                fired.open()
            }, to: .default)
    }
}

private func errorText(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}
