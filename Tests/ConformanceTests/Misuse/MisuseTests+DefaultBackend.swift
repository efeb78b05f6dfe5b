import Glibc
import RunLoopKit
import Testing

/// X3: Misuse traps — `Loop.current` and `Loop.main` cannot throw, so a default backend that
/// cannot start traps, naming why. Provoked in an exit test's child: with no descriptor left
/// to the process (`RLIMIT_NOFILE` 0), no backend can start, whichever the build's default is.
@Suite("Default backend that cannot start")
struct DefaultBackendTrapTests {
    /// What each entry point's trap says before the backend's error.
    static let traps = [
        "current": "RunLoopKit: cannot create this thread's loop: ",
        "main": "RunLoopKit: cannot create the main loop: ",
    ]

    @Test(
        "Loop.current and Loop.main trap, naming why, when the build's default backend cannot start",
        arguments: traps.keys.sorted())
    func entryPointTraps(_ entryPoint: String) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [entryPoint] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            leaveNoDescriptor()
            _ = entryPoint == "main" ? Loop.main : Loop.current
        }
        let message = standardError(of: result)
        #expect(message.contains(Self.traps[entryPoint, default: "?"]), "\(message)")
        #expect(message.contains("\(BackendKind.default)"), "the message does not name the backend: \(message)")
    }
}

/// Lowers the process's descriptor limit to zero: every call that would open one fails with
/// `EMFILE` (those already open, standard error among them, still work).
private func leaveNoDescriptor() {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = 0
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
}

private func standardError(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}
