import Glibc
import RunLoopKit

/// A backend wait as Core makes it, with every signal blocked on this thread: no signal can
/// interrupt it (the test runner's child processes send SIGCHLD), so it returns for an event,
/// a wake or its timeout, and a test can tell a wake by the wait ending early with no event (a
/// backend's wait says nothing of it).
func waitOut(_ backend: any Backend, timeout: Duration?, into events: inout [ReadyEvent]) throws {
    var all = sigset_t()
    var previous = sigset_t()
    sigfillset(&all)
    pthread_sigmask(SIG_BLOCK, &all, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    try backend.wait(timeout: timeout, into: &events)
}
