import CTestSupport
import Glibc
import RunLoopKit
import TestSupport
import Testing

/// `RUNLOOPKIT_REQUIRED_BACKENDS` shown to fail a run: in a child process a seccomp filter makes
/// the call a backend starts with fail with EPERM, as a container's sandbox does, and the child
/// runs the check ``BackendAvailabilityTests`` runs (`requiredBackendFailures()`), exiting with
/// failure when it reports one — as that test records an issue and fails the run. Required, the
/// refused backend fails, naming itself and the refused call; not required, it is only left out
/// of the backends the suite runs on; not refused, it passes.
@Suite("Required backends: a refused backend fails the run")
struct RequiredBackendsRefusedTests {
    /// A backend and the system call it cannot start without.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let backend: String
        let call: String
        let number: Int32
        var testDescription: String { "\(backend) (\(call) refused)" }
    }

    static let refusals: [Refusal] = [
        Refusal(backend: "epoll", call: "epoll_create1", number: rlk_test_sys_epoll_create1),
        Refusal(backend: "uring", call: "io_uring_setup", number: rlk_test_sys_io_uring_setup),
    ].filter { refusal in BackendKind(rawValue: refusal.backend) != nil } // In this build.

    @Test("a required backend the kernel refuses fails the check, naming the backend and the call", arguments: refusals)
    func requiredAndRefused(_ refusal: Refusal) async {
        let errors = await childErrors(refusal, refuse: true, require: true, exits: .failure)
        #expect(errors.contains("RUNLOOPKIT_REQUIRED_BACKENDS requires \(refusal.backend), which cannot start here"))
        #expect(errors.contains(refusal.call))
    }

    @Test("a backend refused but not required is left out of the run, not failed", arguments: refusals)
    func refusedNotRequired(_ refusal: Refusal) async {
        let errors = await childErrors(refusal, refuse: true, require: false, exits: .success)
        #expect(errors.contains("left out: \(refusal.backend)"))
    }

    @Test("the same backend required and not refused passes the check", arguments: refusals)
    func requiredNotRefused(_ refusal: Refusal) async throws {
        // A backend this machine refuses by itself can only be required where the run requires
        // it (then the child fails, and so does this test); otherwise there is nothing to show.
        if let kind = BackendKind(rawValue: refusal.backend), !isRequired(kind), let error = unavailability(of: kind) {
            try Test.cancel("\(refusal.backend) cannot start here: \(error)")
        }
        let errors = await childErrors(refusal, refuse: false, require: true, exits: .success)
        #expect(errors.contains("starts: \(refusal.backend)"))
    }

    /// Runs the check in a child as described above and returns what it wrote to standard error.
    private func childErrors(_ refusal: Refusal, refuse: Bool, require: Bool, exits: ExitTest.Condition) async -> String
    {
        let backend: String = refusal.backend
        let number: Int32 = refusal.number
        let result = await #expect(processExitsWith: exits, observing: [\.standardErrorContent]) {
            [backend = backend as String, number = number as Int32, refuse = refuse as Bool, require = require as Bool]
            in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            // Before the first read of either list, and on the thread that then makes the
            // backends (the filter is the calling thread's).
            if require {
                setenv("RUNLOOPKIT_REQUIRED_BACKENDS", backend, 1)
            } else {
                unsetenv("RUNLOOPKIT_REQUIRED_BACKENDS")
            }
            if refuse, rlk_test_deny_syscall(number, EPERM) != 0 {
                say("FAILED: seccomp: errno \(errno)")
                exit(2)
            }
            let failures = requiredBackendFailures()
            let starts = startableBackends.contains { $0.name == backend }
            say((starts ? "starts: " : "left out: ") + backend)
            for failure in failures { say(failure) }
            exit(failures.isEmpty ? 0 : 1)
        }
        return String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }
}

/// Writes `line` to standard error (descriptor 2), which the parent reads.
private func say(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}
