// main-loop-tool: a command-line tool whose async `main` runs on RunLoopKit's main loop.
//
// LoopExecutorFactory is this program's DefaultExecutorFactory, and the target is built with
// `-Xfrontend -disable-availability-checking` (see the Examples package), so the compiler
// installs it: the main actor's jobs run on Loop.main. While `main` awaits, the loop keeps
// serving its timers, its sources and DispatchQueue.main. Returning from `main` ends the
// program with status 0; an error thrown from it is reported as a fatal error, as in any Swift
// program.
import Dispatch
import RunLoopKit

typealias DefaultExecutorFactory = LoopExecutorFactory

// Built without the flag, Swift silently keeps Dispatch's main executor, and nothing would run
// the main loop's timers: say so instead of hanging.
guard LoopExecutorFactory.isInstalled else {
    fatalError("main-loop-tool: build this target with -Xfrontend -disable-availability-checking")
}

let loop = Loop.main
let progress = Progress()

// A repeating timer in the common modes: it keeps ticking while `main` awaits below. Its
// callback runs on the main thread, so it may assume the main actor's isolation.
let ticker = try Loop.Timer(after: .milliseconds(10), repeating: .milliseconds(10)) { _ in
    MainActor.assumeIsolated { progress.tick() }
}
loop.add(ticker, to: .common)

// A DispatchQueue.main block: the main loop drains libdispatch's main queue in its common modes.
await withCheckedContinuation { continuation in
    DispatchQueue.main.async {
        progress.note("a DispatchQueue.main block ran in mode \(loop.currentMode.map { "\($0)" } ?? "none")")
        continuation.resume()
    }
}

// Work on the default executor (Dispatch's global queues); the results come back here.
let sums = await withTaskGroup(of: Int.self) { group in
    for count in [1_000, 2_000, 3_000] {
        group.addTask { (1...count).reduce(0, +) }
    }
    var sums: [Int] = []
    for await sum in group { sums.append(sum) }
    return sums.sorted()
}
progress.note("three child tasks on the default executor summed: \(sums)")

// @MainActor code reached from another thread hops onto the main loop.
await Task.detached {
    await progress.note("a detached task hopped onto the main actor")
}.value

// A one-shot timer of the main loop, awaited.
await withCheckedContinuation { continuation in
    loop.add(try! Loop.Timer(after: .milliseconds(30)) { _ in continuation.resume() }, to: .default)
}
progress.note("a Loop.Timer fired")

// Task.sleep: timed by the default executor, resumed on the main loop.
try await Task.sleep(for: .milliseconds(50))
ticker.invalidate()
progress.note("slept; the ticker ticked \(progress.ticks > 0 ? "meanwhile" : "never")")
progress.note("returning from main: the program exits with status 0")
