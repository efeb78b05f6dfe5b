// LoopExecutorFactory exists with Swift 6.3 and later only (see its source file).
#if compiler(>=6.3)
import Dispatch
import Glibc
import RunLoopKit
import Synchronization
@_spi(ExperimentalCustomExecutors) import _Concurrency

/// The main actor's executor driven by hand, as the runtime's SPI allows: `run()` serves the
/// main actor until `stop()`, which ends it only once a loop run nested in one of its jobs has
/// ended; `runUntil(_:)` returns once its condition holds; a `stop()` while no run is active
/// is not kept for the next one.
@MainActor
func executorRunScenario(_ loop: Loop) throws {
    let executor = MainActor.executor
    Task { @MainActor in
        trace("job on the running main loop: \(loop.currentMode != nil)")
        executor.stop()
        loop.add(
            try! Loop.Timer(after: .milliseconds(5)) { _ in
                trace("timer stops the nested run")
                loop.stop()
            }, to: .default)
        trace("nested run: \(loop.run())")
    }
    try executor.run()
    trace("run returned")

    let done = Done()
    Task { @MainActor in
        try await Task.sleep(for: .milliseconds(2))
        trace("condition set")
        done.flag.store(true, ordering: .relaxed)
    }
    try executor.runUntil { done.flag.load(ordering: .relaxed) }
    trace("runUntil returned")

    executor.stop()
    Task { @MainActor in
        trace("served after a stop with no run active")
        executor.stop()
    }
    try executor.run()
    trace("run returned")
}

/// Queues a main-actor task, asks whether the factory is installed, then installs it twice:
/// the task, queued on the dispatch main queue before, still runs on the main loop.
@MainActor
func installAfterTheMainActorWasUsed(_ loop: Loop) {
    Task { @MainActor in
        trace(
            "task queued before install: on the running main loop \(Loop.current === loop && loop.currentMode != nil)")
        loop.stop()
    }
    trace("installed before: \(LoopExecutorFactory.isInstalled)")
    LoopExecutorFactory.install()
    LoopExecutorFactory.install()
    trace("installed: \(LoopExecutorFactory.isInstalled)")
    trace("run: \(loop.run(timeout: .seconds(30)))")
}

/// Runs the main actor's executor on another thread, which must trap; prints a line if it
/// returned instead (within the generous deadline).
func runExecutorOffMainThread() {
    let returned = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        try! MainActor.executor.run()
        returned.signal()
    }
    if returned.wait(timeout: .now() + .seconds(30)) == .success { trace("run() returned off the main thread") }
    trace("no trap")
}

/// Runs the main actor's executor inside a DispatchQueue.main block, where the main loop's
/// default mode serves nothing: it must trap; prints a line if it did not.
@MainActor
func runExecutorInsideMainQueueBlock(_ loop: Loop) {
    DispatchQueue.main.async {
        try! MainActor.executor.run()
        trace("run() returned inside a DispatchQueue.main block")
    }
    trace("run: \(loop.run(timeout: .seconds(30), returnAfterSourceHandled: true))")
    trace("no trap")
}

private final class Done: Sendable {
    let flag = Atomic<Bool>(false)
}

/// Prints one line, unbuffered (a crash must not lose earlier lines).
@Sendable private func trace(_ line: String) {
    let text = line + "\n"
    _ = text.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
}
#endif
