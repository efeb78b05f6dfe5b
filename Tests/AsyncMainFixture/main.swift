// An async `main` with LoopExecutorFactory as its DefaultExecutorFactory, built with
// `-Xfrontend -disable-availability-checking` so that the compiler installs it: the main actor
// runs on the main loop. Usage: AsyncMainFixture BACKEND [throw]
// LoopExecutorFactory exists with Swift 6.3 and later only (see its source file).
#if compiler(>=6.3)
import AsyncMainChecks
import RunLoopKit

typealias DefaultExecutorFactory = LoopExecutorFactory

try await runAsyncMainChecks(CommandLine.arguments)
#endif
