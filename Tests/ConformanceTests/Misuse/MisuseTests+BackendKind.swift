import Glibc
import RunLoopKit
import Testing

/// Bad input to `BackendKind`, a programming error that traps (Tests/README.md, Backends).
extension MisuseTests {
    @Test(
        "BackendKind(name:) with a built-in backend's name or an empty name traps",
        arguments: ["epoll", "uring", "libevent", ""])
    func reservedKindName(_ name: String) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [name] in
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            _ = BackendKind(name: name)
        }
        let expected =
            name.isEmpty
            ? "BackendKind(name:): a backend's name must not be empty"
            : "BackendKind(name:): \"\(name)\" is the name of one of RunLoopKit's own backends; use BackendKind.\(name)"
        #expect(standardError(of: result).contains(expected))
    }

    @Test("BackendKind.factory of a third-party kind traps")
    func thirdPartyFactory() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            alarm(60) // A child that hangs dies of SIGALRM instead of holding up the run.
            _ = BackendKind(name: "kqueue").factory
        }
        #expect(
            standardError(of: result).contains(
                "BackendKind.factory: kqueue is not a backend built into RunLoopKit; create its loop with its own BackendFactory"
            ))
    }
}

private func standardError(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}
