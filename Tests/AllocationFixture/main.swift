import Glibc
import RunLoopKit
import TestSupport

// Counts a loop's allocations in steady state, and fails when there are more than the loop's
// promise allows. Run it built for release (what programs ship; a debug build allocates in
// unspecialised generic code) with the malloc interposer preloaded, as `scripts/test` does:
//
//     LD_PRELOAD=…/libMallocInterposerSwift.so AllocationFixture BACKEND…
//
// First the counter itself (AllocationCounter.swift): it must count a known number of
// deliberate allocations exactly, or the run fails at once (without the interposer every
// count would be 0 and every budget met). Then, on each backend, on the loop's thread:
// passes that poll, signals and posted blocks (PollingPasses.swift), and passes that sleep
// and are woken by a timer, by a readable descriptor and by `perform` from another thread
// (SleepingPasses.swift). Each line of output names the backend and the kind of pass; each
// budget exceeded is a `FAILED` line on standard error, and the exit status is then 1.

let backends = CommandLine.arguments.dropFirst().map { name -> BackendKind in
    guard let kind = BackendKind(rawValue: name) else { fatalError("AllocationFixture: unknown backend \(name)") }
    return kind
}
guard !backends.isEmpty else { fatalError("usage: AllocationFixture BACKEND…") }

try onOwnThread { idleThread in
    if !counterCountsExactly(idleThread: idleThread) {
        fail("the allocation counter does not count: no budget below can be checked")
        exit(1)
    }
}
for backend in backends {
    try onOwnThread { _ in
        do { try measure(backend) } catch BackendError.unavailable(_, let why) where !isRequired(backend) {
            // As in the test suites: a backend this machine cannot start is skipped, said,
            // unless RUNLOOPKIT_REQUIRED_BACKENDS lists it (then it fails, below).
            report("\(backend): skipped, it cannot start here: \(why)")
        } catch {
            fail("\(backend): \(error)")
        }
    }
}
exit(failures.load(ordering: .relaxed) == 0 ? 0 : 1)
