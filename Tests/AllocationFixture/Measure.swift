import Glibc
import RunLoopKit

/// Runs `body` on a thread of its own (a loop belongs to its thread) and waits; the waiting
/// thread allocates nothing meanwhile, and is passed to `body` as such.
func onOwnThread(_ body: @escaping @Sendable (_ idleThread: pthread_t) -> Void) throws {
    let idle = pthread_self()
    try PThread.spawn { body(idle) }.join()
}

/// Every measurement on `backend`, with the calling thread's loop.
func measure(_ backend: BackendKind) throws {
    let loop = try Loop.current(backend: backend)
    try measurePollingPasses(loop, backend)
    let sleeping = SleepingPasses(loop: loop, backend: backend)
    try sleeping.wokenByTimer()
    try sleeping.wokenByDescriptor()
    try sleeping.wokenByPerform()
}
