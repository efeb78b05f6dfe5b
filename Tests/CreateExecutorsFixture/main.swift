// A synchronous `main` that installs LoopExecutorFactory itself (no compiler flag).
//
// Usage: CreateExecutorsFixture BACKEND HOW [throw], where HOW is
//   install          LoopExecutorFactory.install(), then the async checks in Loop.main.run { … };
//   createExecutors  the same through the runtime's SPI, _createExecutors(factory:);
//   executor-run     install(), then the main actor's executor run and stopped directly;
//   late-install     a @MainActor task queued first, then install() twice: the task still runs
//                    on the main loop (through the dispatch main queue);
//   executor-off-main, executor-in-drain
//                    install(), then that executor run where it cannot: off the main thread,
//                    inside a DispatchQueue.main block (each must trap with a message).
//
// LoopExecutorFactory exists with Swift 6.3 and later only (see its source file).
#if compiler(>=6.3)
@_spi(ExperimentalCustomExecutors) import _Concurrency
import AsyncMainChecks
import Glibc
import RunLoopKit

var arguments = CommandLine.arguments
guard arguments.count >= 3, let kind = BackendKind(rawValue: arguments[1]) else {
    print(
        "usage: CreateExecutorsFixture BACKEND install|createExecutors|executor-run|late-install|executor-off-main|executor-in-drain [throw]"
    )
    exit(2)
}
let loop = try Loop.current(backend: kind)
switch arguments.remove(at: 2) {
case "install":
    LoopExecutorFactory.install()
case "createExecutors":
    _createExecutors(factory: LoopExecutorFactory.self)
case "executor-run":
    LoopExecutorFactory.install()
    try executorRunScenario(loop)
    exit(0)
case "late-install":
    installAfterTheMainActorWasUsed(loop)
    exit(0)
case "executor-off-main":
    LoopExecutorFactory.install()
    runExecutorOffMainThread()
    exit(0)
case "executor-in-drain":
    LoopExecutorFactory.install()
    runExecutorInsideMainQueueBlock(loop)
    exit(0)
case let how:
    print("unknown way to install: \(how)")
    exit(2)
}
try loop.run { [arguments] in try await runAsyncMainChecks(arguments) }
#endif
