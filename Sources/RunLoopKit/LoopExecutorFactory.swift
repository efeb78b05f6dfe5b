// LoopExecutorFactory needs the runtime's custom-executor SPI as Swift 6.3 ships it (tested with
// 6.3.1); with an older compiler RunLoopKit builds without it.
#if compiler(>=6.3)
import RunLoopCore
@_spi(ExperimentalCustomExecutors) import _Concurrency

/// The executors that put a program's main actor on `Loop.main`: with them installed, an
/// `async` `main` runs on the main loop, and timers, sources and `DispatchQueue.main` keep
/// being served while it awaits.
///
/// The main actor's executor runs its jobs on the main thread, in the main loop's common
/// modes, in the order enqueued; Swift's async entry point runs the main loop (in its default
/// mode) once `main`'s synchronous part has returned. The default executor, which runs
/// nonisolated async code, is the platform's (on Linux, Dispatch's global queues); it also
/// times `Task.sleep`, whose continuation then comes back to the main loop.
///
/// There are two ways to install it, both checked with Swift 6.3.1:
///
/// - **An async `main`**, by naming the factory `DefaultExecutorFactory` at the top level of
///   the executable's module or inside its `@main` type:
///
///   ```swift
///   typealias DefaultExecutorFactory = LoopExecutorFactory
///
///   try await Task.sleep(for: .milliseconds(10))   // top-level code: an async main
///   ```
///
///   The compiler installs the factory only when the executable's own module is built with
///   `-Xfrontend -disable-availability-checking` (in SwiftPM:
///   `swiftSettings: [.unsafeFlags(["-Xfrontend", "-disable-availability-checking"])]` on the
///   executable target). Without the flag the program silently keeps Dispatch's main executor
///   — `isInstalled` tells, and a program can check it first thing. The trade-offs: the
///   flag turns off every availability diagnostic in that module, and SwiftPM refuses a
///   product whose targets use unsafe flags when a package depends on it by version (a path,
///   branch or revision dependency, and the root package, are accepted).
///
/// - **A synchronous `main`** that calls `install()` before anything uses the main actor,
///   then runs its async code on the main loop with `Loop.run(_:_:)`:
///
///   ```swift
///   LoopExecutorFactory.install()
///   let answer = try Loop.main.run {
///       try await Task.sleep(for: .milliseconds(10))
///       return 42
///   }
///   ```
///
///   No flag is needed and no SPI import: `install()` calls the runtime's
///   `_createExecutors(factory:)` (an `ExperimentalCustomExecutors` SPI) for you; calling it
///   directly, with `@_spi(ExperimentalCustomExecutors) import _Concurrency`, is the same.
///
/// Without either, `Loop.main.run { … }` still works: the main loop then serves the main
/// actor through libdispatch's main queue, which it drains in its common modes.
///
/// The conformance to `ExecutorFactory` belongs to the `ExperimentalCustomExecutors` SPI of
/// the Swift runtime; a program names the type without importing that SPI.
public enum LoopExecutorFactory {
    /// Makes the main loop the main actor's executor and the platform's the default one.
    ///
    /// Call it first in a synchronous `main`, before anything runs on the main actor (work
    /// already queued for the main actor stays on libdispatch's main queue, which the main loop
    /// drains too). Calling it again has no further effect.
    public static func install() {
        _createExecutors(factory: LoopExecutorFactory.self)
    }

    /// Whether the main actor's executor is the main loop: the factory was installed, by
    /// `install()` or by the compiler for an async `main`. Safe from any thread.
    ///
    /// False in a program that named the factory but was built without
    /// `-Xfrontend -disable-availability-checking`: check it to catch that.
    public static var isInstalled: Bool {
        MainActor.executor is MainLoopExecutor
    }
}

@_spi(ExperimentalCustomExecutors)
extension LoopExecutorFactory: ExecutorFactory {
    /// The main loop, as the main actor's executor.
    public static var mainExecutor: any MainExecutor { MainLoopExecutor.shared }

    /// The platform's default executor (on Linux, Dispatch's global queues).
    public static var defaultExecutor: any TaskExecutor { PlatformExecutorFactory.defaultExecutor }
}
#endif
