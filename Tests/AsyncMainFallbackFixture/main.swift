// AsyncMainFixture's program built without `-Xfrontend -disable-availability-checking`: the
// compiler ignores DefaultExecutorFactory and the main actor stays on Dispatch's main executor.
// The negative control: the checks must see that. Usage: AsyncMainFallbackFixture BACKEND
// LoopExecutorFactory exists with Swift 6.3 and later only (see its source file).
#if compiler(>=6.3)
import AsyncMainChecks
import RunLoopKit

typealias DefaultExecutorFactory = LoopExecutorFactory

try await runAsyncMainChecks(CommandLine.arguments)
#endif
